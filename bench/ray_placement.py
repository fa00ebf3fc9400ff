"""What playing on Ray costs against the local executor (issues 15, 27, 36), on a two-node Ray cluster this script
starts on this machine as a user would (``ray start --head`` and a second ``ray start --address``, each with its
own ``--temp-dir`` and ports; stopped at the end by their process groups) or on ``--address``. Not a test.

    .venv/bin/python bench/ray_placement.py [--runs 8] [--benchmark max] [--latencies 0,0.05]
                                            [--scenes quiet,hog] [--address HOST:PORT]

For each latency (seconds per model call) and scene (``quiet``; ``hog``: beside two busy loops on the same cores)
it plays one matrix of ``--runs`` runs of ``--benchmark`` against the chatbot on the scripted models, first on the
local executor, then on the cluster, and prints the wall time of both and their ratio beside the goal (Ray ≤ 1.3 ×
local), the time to join the cluster (the first start) and from joining to the first event at the head (goal
≤ 3 s quiet), the nodes the runs played on, and the peak RSS of each node's player process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapters.local.ports import free_port  # noqa: E402
from engine.config import load_config  # noqa: E402
from engine.events import Event  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402

RATIO_GOAL = 1.3  # Ray's wall time for the matrix, as a multiple of the local executor's
FIRST_EVENT_GOAL = 3.0  # seconds from joining the cluster to the first event at the head, quiet
RAY = str(Path(sys.executable).with_name("ray"))


class LocalCluster:
    """Two Ray nodes on this machine, started with the ``ray`` command line (each its own temp folder and ports,
    ``--num-cpus`` each); stopped by ending their processes by id, never by ``ray stop`` (which would end every
    Ray instance of the machine). Where a Ray token exists (``~/.ray/auth_token``) every process of it runs with
    ``RAY_AUTH_MODE=token``, as the README's real cluster does."""

    def __init__(self, cpus: int = 2) -> None:
        self.cpus = cpus
        self.root = Path(tempfile.mkdtemp(prefix="mmb-rb-", dir="/tmp"))  # short: Unix socket paths
        self.address = ""

    def _ports(self) -> list[str]:
        low = free_port()
        while any(not _free(p) for p in range(low, low + 30)):
            low = free_port()
        names = ["node-manager", "object-manager", "metrics-export", "dashboard-agent-listen"]
        names += ["dashboard-agent-grpc", "runtime-env-agent"]
        flags = [f"--{name}-port={low + i}" for i, name in enumerate(names)]
        return [*flags, f"--min-worker-port={low + 10}", f"--max-worker-port={low + 29}"]

    def start(self) -> None:
        if (Path.home() / ".ray" / "auth_token").exists():  # the head turns token auth on by itself then
            os.environ.setdefault("RAY_AUTH_MODE", "token")
        port = free_port()
        common = ["--disable-usage-stats", f"--num-cpus={self.cpus}"]
        head = [RAY, "start", "--head", f"--port={port}", "--include-dashboard=false", *common]
        said = self._run([*head, f"--temp-dir={self.root / 'h'}", *self._ports()])
        joined = re.search(r"ray start --address='([^']+)'", said)  # the head's IP, as the nodes must name it
        self.address = joined[1] if joined else f"127.0.0.1:{port}"
        worker = [RAY, "start", f"--address={self.address}", *common]
        self._run([*worker, f"--temp-dir={self.root / 'w'}", *self._ports()])

    def _run(self, command: list[str]) -> str:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise SystemExit(f"{' '.join(command[:3])} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout + done.stderr

    def stop(self) -> None:
        """End every process whose command line names this cluster's temp folder (its nodes' processes and
        their workers), by id; the bench itself is never one of them."""
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and int(proc.name) != os.getpid():
                    if str(self.root) in (proc / "cmdline").read_text(errors="replace"):
                        os.kill(int(proc.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                continue
        shutil.rmtree(self.root, ignore_errors=True)


def _free(port: int) -> bool:
    from adapters.local.ports import port_is_free

    return port_is_free(port) and port_is_free(port, "0.0.0.0")


class FirstEvents:
    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def on_event(self, run_id: str, event: Event) -> None:
        self.at.setdefault(run_id, time.monotonic())


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (``VmHWM``), in MB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user and system), in seconds; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ray_own_cpu(root: str) -> float:
    """The CPU time of the cluster's own processes (GCS, raylets, agents: their command lines name ``root``)."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and root and root in (proc / "cmdline").read_text(errors="replace"):
                total += cpu_seconds(int(proc.name))
        except OSError:
            continue
    return total


def write_matrix(folder: Path, args: argparse.Namespace, latency: float, executor: dict[str, Any]) -> Path:
    """A matrix of ``--runs`` runs of the benchmark: two chatbot variants × the benchmark × half as many repeats."""
    shutil.copytree(ROOT / "benchmarks" / args.benchmark, folder / "benchmarks" / args.benchmark)
    slow = {"latency": latency}
    chat = {"name": "chat", "agent": "chatbot", "model": "agent"}
    agents = [chat, {**chat, "name": "terse", "max_reply_chars": 2000}]
    raw = {
        "models": {
            "persona": {"model": "scripted/persona", **slow},
            "agent": {"model": "scripted/recall", **slow},
        },
        "persona": {"model": "persona"},
        "executor": executor,
        "runs": {},
        "matrices": {
            "m": {"agents": agents, "benchmarks": [args.benchmark], "repeats": max(1, args.runs // 2)}
        },
    }
    (folder / "config.jsonc").write_text(json.dumps(raw))
    return folder / "config.jsonc"


async def play(config_path: Path, root: str = "") -> dict[str, Any]:
    """Every run of the config to its end: wall time, the first start (for Ray: joining it), the first event at
    the head from the first start, how each ended, where each played, its players' peak RSS, and the CPU time
    of this process (the engine, or Ray's driver), of the players and of the cluster's own processes."""
    own, cluster = time.process_time(), ray_own_cpu(root)
    scheduler = Scheduler(load_config(config_path))
    first = FirstEvents()
    scheduler.add_observer(first)
    run_ids = scheduler.run_ids()
    began = time.monotonic()
    await scheduler.start(run_ids[0])
    joined = time.monotonic() - began
    for run_id in run_ids[1:]:
        await scheduler.start(run_id)
    waiter = asyncio.ensure_future(scheduler.wait())
    nodes: dict[str, str] = {}
    pids: dict[Any, int] = {}
    peaks: dict[int, float] = {}
    cpu: dict[int, float] = {}
    while not waiter.done():
        for run_id, slot in scheduler.slots.items():
            placed: Any = slot.placed
            if placed is not None and placed.node:
                nodes[run_id] = placed.node
            actor = getattr(placed, "actor", None)
            if actor is not None and actor not in pids:
                pids[actor] = (await actor.where.remote())[1]
        for pid in pids.values():
            peaks[pid] = max(peaks.get(pid, 0.0), peak_rss_mb(pid))
            cpu[pid] = max(cpu.get(pid, 0.0), cpu_seconds(pid))
        await asyncio.sleep(0.2)
    ended = waiter.result()
    for pid in pids.values():  # the players outlive their runs a while: their last figures
        cpu[pid] = max(cpu.get(pid, 0.0), cpu_seconds(pid))
    why = {run_id: scheduler.view(run_id).reason for run_id in run_ids}
    return {
        "cpu": {
            "here": time.process_time() - own,
            "players": sum(cpu.values()),
            "ray": ray_own_cpu(root) - cluster if root else 0.0,
        },
        "wall": time.monotonic() - began,
        "joined": joined,
        "first_event": min(first.at.values(), default=began) - began,
        "finished": sum(1 for reason in ended.values() if str(reason) == "finished"),
        "runs": len(ended),
        "not_finished": {
            r: f"{why_}: {why[r]}"[:200] for r, why_ in ended.items() if str(why_) != "finished"
        },
        "nodes": Counter(nodes.values()),
        "peaks": sorted(peaks.values()),
    }


def hog() -> list[subprocess.Popen[bytes]]:
    """Two busy loops on this machine's cores, as other work beside the runs."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]


def scene(args: argparse.Namespace, address: str, latency: float, busy: bool, root: str) -> dict[str, Any]:
    import ray

    with tempfile.TemporaryDirectory(prefix="mmb-ray-bench-") as folder:
        loops = hog() if busy else []
        try:
            local = asyncio.run(play(write_matrix(Path(folder) / "local", args, latency, {"kind": "local"})))
            executor = {"kind": "ray", "address": address, "placement": args.placement}
            placed = asyncio.run(play(write_matrix(Path(folder) / "ray", args, latency, executor), root))
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
            ray.shutdown()
    return {"local": local, "ray": placed}


def report(latency: float, busy: bool, figures: dict[str, Any]) -> None:
    local, placed = figures["local"], figures["ray"]
    ratio = placed["wall"] / local["wall"]
    verdict = "met" if ratio <= RATIO_GOAL else "NOT met"
    first = placed["first_event"]
    name = f"latency {latency * 1000:.0f} ms, {'beside a CPU hog' if busy else 'quiet'}"
    print(f"{name}:")
    print(f"  local {local['wall']:6.1f} s (finished {local['finished']}/{local['runs']})")
    print(f"  ray   {placed['wall']:6.1f} s (finished {placed['finished']}/{placed['runs']})")
    print(f"  ray / local {ratio:.2f} (goal ≤ {RATIO_GOAL}: {verdict})")
    goal = f" (goal ≤ {FIRST_EVENT_GOAL:g} s: {'met' if first <= FIRST_EVENT_GOAL else 'NOT met'})"
    print(f"  join {placed['joined']:.1f} s · joining → first event {first:.1f} s{goal if not busy else ''}")
    print(
        f"  runs per node: {dict(placed['nodes'])} · player peak RSS: {[round(p) for p in placed['peaks']]} MB"
    )
    cpu = placed["cpu"]
    print(
        f"  CPU: local {local['cpu']['here']:.1f} s · ray {sum(cpu.values()):.1f} s (driver {cpu['here']:.1f},"
        f" players {cpu['players']:.1f}, Ray's own processes {cpu['ray']:.1f})"
    )
    for run_id, why in {**local["not_finished"], **placed["not_finished"]}.items():
        print(f"  not finished: {run_id}: {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--benchmark", default="max")
    parser.add_argument("--latencies", default="0,0.05", help="seconds per model call, comma-separated")
    parser.add_argument("--scenes", default="quiet,hog", help="quiet, hog (two busy loops beside the runs)")
    parser.add_argument("--address", default="", help="an existing cluster; unset: start two local nodes")
    parser.add_argument("--placement", default="spread", choices=["spread", "pack"])
    args = parser.parse_args()
    cluster = None if args.address else LocalCluster()
    try:
        if cluster is not None:
            began = time.monotonic()
            cluster.start()
            print(
                f"two local Ray nodes ({cluster.cpus} CPUs each) started in {time.monotonic() - began:.1f} s"
            )
        address = args.address or (cluster.address if cluster else "")
        print(f"{args.runs} runs of {args.benchmark} @ chatbot on scripted models, Ray at {address}")
        for latency in (float(value) for value in args.latencies.split(",")):
            for name in args.scenes.split(","):
                root = str(cluster.root) if cluster else ""
                report(latency, name == "hog", scene(args, address, latency, name == "hog", root))
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()

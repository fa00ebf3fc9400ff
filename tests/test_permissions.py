"""Nothing a run writes is readable by other local users (issue 23, items 8 and 9).

Every file under ``results/`` is 0600 and every folder 0700 — the engine's own files, the report, the log and
what a real local agent process writes in its home — whatever umask the process started with, from the command
line or with the engine used as a library (``engine/run/lock.py`` ``private_umask``). The control socket of a
run whose folder's path is too long for ``AF_UNIX`` is in a private folder of a random name, never at a name
another user could take first, and a viewer connects only to a socket of its own user in a private folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from engine_helpers import ROOT, make_config, play

from adapters.base import AdapterContext
from adapters.local.agent import LocalAgentAdapter
from engine.clock import Clock
from engine.commands import Pause
from engine.config import Config
from engine.events import Event, TerminationReason
from engine.models.base import Message
from engine.models.scripted_recall import answer
from engine.placement.remote import MAX_SOCKET_PATH, SOCKET_NAME, RemoteRun
from engine.placement.scheduler import Scheduler
from engine.run.lock import owner_socket

AGENT_SCRIPT = """
import os, pathlib, time
home = pathlib.Path(os.environ["HOME"])
(home / "memories").mkdir(exist_ok=True)
(home / "memories" / "MEMORY.md").write_text("what the agent keeps\\n")
print("agent up", flush=True)
time.sleep(600)
"""
NOBODY = 65534


class ProcessAgent(LocalAgentAdapter):
    """A real local agent process (``adapter/process.log``, a home it writes its memory in, a pid file), whose
    answers are made in the engine by lexical recall. Named ``test_permissions:ProcessAgent`` in configs."""

    name = "process-agent"

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.home = self.agent_dir / "home"
        self.context: list[Message] = []

    async def create_session(self, name: str) -> None:
        if not self.process.alive():
            self.home.mkdir(parents=True, exist_ok=True)
            env = self.process_env(self.home, {})
            self.process.start([sys.executable, "-c", AGENT_SCRIPT], env, self.home)
            await self.process.wait_ready(self._ready, self.start_timeout, interval=0.02)

    async def _ready(self) -> bool:
        return (self.home / "memories" / "MEMORY.md").exists()

    async def send_message(self, text: str) -> None:
        self.context.append({"role": "user", "content": text})
        reply = answer(self.context)
        self.context.append({"role": "assistant", "content": reply})
        self.record_reply(reply)

    async def destroy_session(self) -> None:
        self.context = []

    def snapshot_memory(self, label: str) -> Path | None:
        return self.copy_memory(label, [(self.home / "memories" / "MEMORY.md", "MEMORY.md")])


AGENT = {"agent": "test_permissions:ProcessAgent", "virtual_time": False}


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The process starts with the usual umask 022 (files 0644): the engine must close them itself."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def modes(root: Path) -> dict[str, str]:
    """Every path under ``root`` (itself included) whose mode lets group or others in: ``{path: mode}``."""
    found = {}
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode) or stat.S_ISSOCK(info.st_mode):
            continue
        wanted = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if stat.S_IMODE(info.st_mode) != wanted:
            found[str(path.relative_to(root.parent))] = oct(stat.S_IMODE(info.st_mode))
    return found


def written(results: Path) -> set[str]:
    return {str(p.relative_to(results)) for p in results.rglob("*") if p.is_file()}


EXPECTED = {
    "report.md",
    "r/transcript.jsonl",
    "r/journal.1.jsonl",
    "r/state.json",
    "r/run.lock",
    "r/adapter/process.log",
    "r/agent/home/memories/MEMORY.md",
    "r/memory/index.jsonl",  # the agent's memory history (engine/autopsy/history.py), its blobs beside it
}


async def test_a_run_played_as_a_library_leaves_nothing_open_to_others(
    tmp_path: Path, open_umask: None
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "agent_smoke", **AGENT}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    results = config.results_path()
    assert EXPECTED <= written(results)
    assert modes(results) == {}


def test_a_run_played_from_the_command_line_leaves_nothing_open_to_others(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "agent_smoke", **AGENT}})
    command = [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(tmp_path / "config.jsonc")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    played = subprocess.run(
        [*command, "run", "r", "--headless"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        umask=0o022,
    )
    assert played.returncode == 0, played.stderr
    results = config.results_path()
    assert EXPECTED | {"mmb-tui.log"} <= written(results)
    assert modes(results) == {}


# ---- the control socket ---------------------------------------------------------------------------------


def _slow_config(tmp_path: Path, results: Path) -> Config:
    return make_config(
        tmp_path,
        {"r": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        benchmarks=ROOT / "benchmarks",
        models={"slow-persona": {"model": "scripted/persona", "latency": 0.05}},
        persona={"model": "slow-persona"},
        results_dir=str(results),
    )


def _old_socket_name(run_dir: Path) -> Path:
    """Where earlier versions put the socket of a run whose folder's path is too long: anyone could make it."""
    digest = hashlib.sha256(os.fsencode(run_dir.resolve())).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"mmb-{digest}.sock"


async def until(condition: Callable[[], object], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("runtime", [True, False], ids=["xdg-runtime-dir", "temp-folder"])
async def test_a_long_run_path_puts_the_socket_in_a_private_folder_no_one_else_can_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: bool
) -> None:
    xdg = Path(tempfile.mkdtemp(prefix="xdg-"))  # 0700, short: as /run/user/<uid> is
    if runtime:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    else:
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    config = _slow_config(tmp_path, tmp_path / ("d" * 120) / "results")
    run_dir = config.results_path() / "r"
    squatted = _old_socket_name(run_dir)  # another user took the old predictable name first
    squatted.mkdir()
    if os.geteuid() == 0:
        os.chown(squatted, NOBODY, NOBODY)
    scheduler = Scheduler(config, front_end="headless")
    try:
        await scheduler.start("r")
        path = owner_socket(run_dir)
        assert path is not None and path.name == SOCKET_NAME and len(os.fsencode(path)) <= MAX_SOCKET_PATH
        assert path.parent.parent == (xdg if runtime else Path(tempfile.gettempdir()))
        assert squatted.stem.removeprefix("mmb-") not in str(path)  # not named from the run's path
        folder = path.parent.stat()
        assert stat.S_IMODE(folder.st_mode) == 0o700 and folder.st_uid == os.geteuid()

        seen: list[Event] = []
        viewer = RemoteRun("r", path, run_dir / "transcript.jsonl", lambda _, event: seen.append(event), 0)
        await until(lambda: len(seen) >= 3 and viewer.view is not None)
        assert (await asyncio.wait_for(viewer.command(Pause()), 30)).ok  # watched and steered
        await viewer.aclose()
        await asyncio.wait_for(scheduler.stop_all(), 60)
        assert not path.parent.exists()  # the owner removed its socket's folder
    finally:
        await asyncio.wait_for(scheduler.stop_all(), 60)
        shutil.rmtree(squatted, ignore_errors=True)
        shutil.rmtree(xdg, ignore_errors=True)


async def test_a_viewer_refuses_a_socket_in_a_folder_others_may_write_in(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(shared / SOCKET_NAME))
    listener.listen()
    try:
        viewer = RemoteRun("r", shared / SOCKET_NAME, tmp_path / "transcript.jsonl", lambda *_: None, 0)
        result = await asyncio.wait_for(viewer.command(Pause()), 10)  # a socket nobody answers on
        assert not result.ok and "others may write in it" in result.message
        await until(lambda: not viewer.alive)
        await viewer.aclose()
    finally:
        listener.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's socket needs root")
async def test_a_viewer_refuses_another_users_socket(tmp_path: Path) -> None:
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / SOCKET_NAME))
    listener.listen()
    os.chown(folder / SOCKET_NAME, NOBODY, NOBODY)
    try:
        viewer = RemoteRun("r", folder / SOCKET_NAME, tmp_path / "transcript.jsonl", lambda *_: None, 0)
        result = await asyncio.wait_for(viewer.command(Pause()), 10)  # a socket nobody answers on
        assert not result.ok and "not a socket of this user's" in result.message
        await until(lambda: not viewer.alive)
        await viewer.aclose()
    finally:
        listener.close()


async def test_the_agent_process_writes_its_files_for_its_user_only(tmp_path: Path, open_umask: None) -> None:
    no_model = lambda name: None  # noqa: E731
    ctx = AdapterContext("r", tmp_path / "r", {"virtual_time": False}, Clock(), no_model)  # type: ignore[arg-type]
    agent = ProcessAgent(ctx)
    try:
        await agent.create_session("s")
    finally:
        await agent.close()
    memories = agent.home / "memories"
    assert stat.S_IMODE(memories.stat().st_mode) == 0o700
    assert stat.S_IMODE((memories / "MEMORY.md").stat().st_mode) == 0o600
    assert stat.S_IMODE(agent.process.log_path.stat().st_mode) == 0o600

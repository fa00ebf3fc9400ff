"""The sandbox's limits (``agent_limits``) with plain programs in it: its ``/tmp`` and ``/dev/shm`` are held to
``tmp_mb``; its processes to ``processes`` (the engine's own do not count); one that holds more memory than
``memory_mb`` in RAM is stopped within seconds (``adapters/local/sandbox/watch.py``), the whole sandbox with it, and
the agent's process log says why, while one within it runs on. The real agents:
``tests/agents/test_sandbox_escapes.py``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import scaled

from adapters.local.install import install_sandbox
from adapters.local.process import AgentProcess
from adapters.local.sandbox.box import AgentBox
from adapters.local.sandbox.options import SandboxOptions
from adapters.local.sandbox.watch import tree_memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")


@pytest.fixture(scope="module", autouse=True)
def bwrap() -> None:
    install_sandbox()


def _layout(tmp_path: Path) -> Path:
    agent = tmp_path / "results" / "run-a" / "agent"
    (agent / "home").mkdir(parents=True)
    return agent


async def _run(
    box: AgentBox, agent: Path, script: str, installs: list[Path]
) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(agent / "home")}
    argv, env = box.wrap(["sh", "-c", script], env, agent / "home", installs)
    try:
        return await asyncio.to_thread(
            subprocess.run, argv, env=env, capture_output=True, text=True, timeout=scaled(30)
        )
    finally:
        box.close()


def _box(agent: Path, **limits: int) -> AgentBox:
    return AgentBox(agent, SandboxOptions.from_options({"agent_limits": limits}))


async def test_its_temp_space_is_held_to_its_size(tmp_path: Path) -> None:
    agent = _layout(tmp_path)
    done = await _run(
        _box(agent, tmp_mb=8),
        agent,
        "head -c 20000000 /dev/zero > /tmp/fill; echo tmp=$?; head -c 20000000 /dev/zero > /dev/shm/fill; "
        "echo shm=$?; head -c 4000000 /dev/zero > $HOME/kept && echo folder-ok; touch /dev/new; df -k /tmp /dev/shm",
        [],
    )
    assert "tmp=1" in done.stdout and "shm=1" in done.stdout and "folder-ok" in done.stdout
    assert done.stderr.count("No space left on device") == 2
    assert "'/dev/new': Read-only file system" in done.stderr  # /dev itself holds nothing new
    sizes = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("tmpfs")]
    assert sizes == ["8192", "8192"]


async def test_its_processes_are_held_to_their_number(tmp_path: Path) -> None:
    agent = _layout(tmp_path)
    python = os.path.realpath(sys.executable)  # in the box, read-only: the launcher runs on it
    spawner = (
        "import subprocess\n"
        "started = []\n"
        "try:\n"
        "    for _ in range(120): started.append(subprocess.Popen(['sleep', '20']))\n"
        "except OSError as exc: print('refused', exc.errno)\n"
        "print('started', len(started))\n"
        "for child in started: child.kill()\n"
    )
    sleepers = [
        subprocess.Popen(["sleep", "20"]) for _ in range(60)
    ]  # the engine's own processes do not count
    try:
        done = await _run(_box(agent, processes=40), agent, f'{python} -c "{spawner}"', [])
    finally:
        for sleeper in sleepers:
            sleeper.kill()
    assert "refused 11" in done.stdout, done  # EAGAIN: no more processes for its uid
    started = int(done.stdout.split("started ")[1].split()[0])
    assert 30 <= started < 40  # the limit, less the launcher, the shell and the interpreter


async def _start(tmp_path: Path, hold_mb: int, limit_mb: int) -> tuple[AgentProcess, AgentBox]:
    agent = tmp_path / "run" / "agent"
    agent.mkdir(parents=True)
    box = AgentBox(agent, SandboxOptions.from_options({"agent_limits": {"memory_mb": limit_mb}}))
    python = os.path.realpath(sys.executable)
    child = f"held = b'x' * ({hold_mb} << 20); import time; time.sleep(60)"
    parent = (
        f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"  # a grandchild holds it
    )
    process = AgentProcess("holder", tmp_path / "run" / "adapter" / "process.log")
    argv, env = box.wrap([python, "-c", parent], {"PATH": os.defpath}, agent, [])
    process.start(argv, env, agent)
    box.watch(process)
    return process, box


async def _ended(process: AgentProcess, seconds: float) -> bool:
    deadline = asyncio.get_running_loop().time() + scaled(seconds)
    while process.alive() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return not process.alive()


async def test_a_sandbox_over_its_memory_is_stopped_and_says_why(tmp_path: Path) -> None:
    process, box = await _start(tmp_path, hold_mb=400, limit_mb=200)
    try:
        assert await _ended(process, 10), "still running over its memory limit"
    finally:
        await process.stop()
        box.close()
    log = process.log_path.read_text()
    assert "mmb sandbox: stopped: its " in log and " processes held " in log, log
    assert "over its limit agent_limits.memory_mb = 200" in log
    assert (
        "over its limit agent_limits.memory_mb = 200" in process.describe_exit()
    )  # the run's waiting reason


async def test_a_sandbox_within_its_memory_runs_on(tmp_path: Path) -> None:
    process, box = await _start(tmp_path, hold_mb=40, limit_mb=200)
    try:
        assert not await _ended(process, 3)
        held_kb, count = tree_memory(process.pid or 0)
        assert (
            count >= 4 and 40 * 1024 <= held_kb < 200 * 1024
        )  # bubblewrap, its init, the launcher, the program…
    finally:
        await process.stop()
        box.close()
    assert "mmb sandbox" not in process.log_path.read_text()

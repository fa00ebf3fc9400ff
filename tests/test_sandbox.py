"""The agents' sandbox (``adapters/sandbox.py``) with a plain program in it: what it sees, what it may write, how it
stops; and the one-line refusal when bubblewrap is missing. The real agents in it: ``tests/agents/``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import scaled

from adapters import sandbox as sandbox_module
from adapters.base import AdapterError
from adapters.install import install_sandbox
from adapters.process import AgentProcess
from adapters.sandbox import Sandbox, venv_base

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")


@pytest.fixture(scope="module", autouse=True)
def bwrap() -> None:
    install_sandbox()


def _layout(tmp_path: Path) -> tuple[Sandbox, Path, Path]:
    """A results folder with this run's agent folder and another run's; a readable install in a hidden home."""
    results = tmp_path / "results"
    agent = results / "run-a" / "agent"
    agent.mkdir(parents=True)
    other = results / "run-b"
    other.mkdir()
    (other / "transcript.jsonl").write_text("secret")
    install = tmp_path / "home" / ".cache" / "agents"
    install.mkdir(parents=True)
    (install / "tool").write_text("the agent's install")
    (tmp_path / "home" / "notes").write_text("the user's own")
    box = Sandbox(agent, readonly=(install,), hidden=(tmp_path / "home", results))
    return box, agent, other


def _run(box: Sandbox, agent: Path, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        box.argv(["sh", "-c", script], agent),
        env=box.env({"PATH": os.defpath}),
        capture_output=True,
        text=True,
        timeout=scaled(30),
    )


def test_the_agent_writes_only_its_folder_and_sees_nothing_hidden(tmp_path: Path) -> None:
    box, agent, other = _layout(tmp_path)
    home = tmp_path / "home"
    done = _run(
        box,
        agent,
        f"echo kept > {agent}/memory.md; cat {home}/.cache/agents/tool; ls {other}; cat {home}/notes; "
        f"touch {home}/x; touch /usr/x; echo t > /tmp/mmb-sandbox-{os.getpid()} && echo tmp-ok; echo cwd=$(pwd) tmp=$TMPDIR",
    )
    assert (agent / "memory.md").read_text() == "kept\n"
    assert "the agent's install" in done.stdout  # shown again, read-only, inside the hidden home
    assert f"ls: cannot access '{other}'" in done.stderr  # another run: not there at all
    assert f"cat: {home}/notes: No such file" in done.stderr  # the user's home: empty
    assert done.stderr.count("Read-only file system") == 2  # neither the hidden home nor the system
    assert not (home / "x").exists() and not Path("/usr/x").exists()
    assert f"tmp-ok\ncwd={agent} tmp=/tmp" in done.stdout  # a private /tmp, in the agent's folder
    assert not Path(f"/tmp/mmb-sandbox-{os.getpid()}").exists()  # written in the sandbox's own /tmp


def test_the_agent_has_its_own_namespaces_and_no_capabilities(tmp_path: Path) -> None:
    box, agent, _ = _layout(tmp_path)
    done = _run(
        box, agent, "readlink /proc/self/ns/mnt /proc/self/ns/pid; grep CapEff /proc/self/status; ls /proc"
    )
    mnt, pid, caps = done.stdout.splitlines()[:3]
    assert mnt != os.readlink("/proc/self/ns/mnt") and pid != os.readlink("/proc/self/ns/pid")
    assert caps.split()[-1] == "0000000000000000"  # even for root: no remounting the system writable
    pids = [name for name in done.stdout.split() if name.isdigit()]
    assert len(pids) <= 4, pids  # only its own processes (bubblewrap's init, the shell, ls)


async def test_a_stop_lets_the_agent_save_before_the_sandbox_goes(tmp_path: Path) -> None:
    box, agent, _ = _layout(tmp_path)
    saver = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        f"    time.sleep(0.3); open({str(agent / 'saved')!r}, 'w').write('saved'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        f"open({str(agent / 'ready')!r}, 'w').close()\n"
        "while True: time.sleep(0.05)\n"
    )
    process = AgentProcess("saver", agent / "process.log")
    python = os.path.realpath(
        sys.executable
    )  # the interpreter itself: a checkout under /tmp is not in the box
    process.start(box.argv([python, "-c", saver], agent), box.env(dict(os.environ)), agent)
    deadline = asyncio.get_running_loop().time() + scaled(20)
    while not (agent / "ready").exists():
        assert asyncio.get_running_loop().time() < deadline, (agent / "process.log").read_text()
        await asyncio.sleep(0.05)
    await process.stop(grace=scaled(5))
    assert (agent / "saved").read_text() == "saved"  # SIGTERM reached the agent, not bubblewrap first
    assert not process.alive()


def test_without_bubblewrap_a_run_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    box, agent, _ = _layout(tmp_path)
    with pytest.raises(AdapterError) as refused:
        box.argv(["true"], agent)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("agent_sandbox: bubblewrap (`bwrap`) is not installed")
    assert "make agents" in message and '"agent_sandbox": "none"' in message


def test_a_venvs_python_is_found_for_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /opt/python/3.11/bin\nversion = 3.11.7\n")
    assert venv_base(tmp_path) == Path("/opt/python/3.11")
    assert venv_base(tmp_path / "missing") is None

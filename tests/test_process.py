"""Process plumbing of the real-agent adapters (``adapters/local/process.py``), offline with dummy child processes.

An agent must never outlive its run: killed with its engine (``PR_SET_PDEATHSIG``), ended as a whole
process group, and found again through the run's pid file when an earlier start left it running — but only
when the pid still names that very process (a reused pid is left alone).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from engine_helpers import scaled

from adapters.base import AdapterError
from adapters.local.agent_pid import (
    end_stale,
    group_members,
    pid_alive,
    proc_cmdline,
    read_pid_file,
    recorded_process_alive,
    write_pid_file,
)
from adapters.local.ports import free_port, port_is_free
from adapters.local.process import AgentProcess, tail

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process features")

ROOT = Path(__file__).resolve().parent.parent
SLEEP = "import time; time.sleep(600)"
# a parent that starts a sleeping agent through AgentProcess, prints its pid, and sleeps until killed
PARENT = """
import sys, time
from pathlib import Path
from adapters.local.process import AgentProcess
folder = Path(sys.argv[1])
process = AgentProcess("dummy", folder / "process.log", folder / "agent.pid")
process.start([sys.executable, "-c", "import time; time.sleep(600)"], {"PATH": "/usr/bin:/bin"}, folder)
print(process.pid, flush=True)
time.sleep(600)
"""
# a server holding a port, with a helper child in its process group
SERVER = """
import socket, subprocess, sys, time
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(helper.pid, flush=True)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
time.sleep(600)
"""


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + scaled(timeout)
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start a detached dummy process (its own group, no tie to this one); every group is killed after."""
    started: list[subprocess.Popen[str]] = []

    def start(argv: list[str], cwd: Path | None = None) -> subprocess.Popen[str]:
        child = subprocess.Popen(
            argv, cwd=cwd, stdout=subprocess.PIPE, text=True, start_new_session=True, env=dict(os.environ)
        )
        started.append(child)
        return child

    yield start
    for child in started:
        with_suppressed_kill(child.pid)
        child.wait(timeout=5)


def with_suppressed_kill(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


# --- the agent dies with its engine -----------------------------------------------------------------


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP])
def test_killing_the_parent_takes_the_agent_down(tmp_path: Path, how: signal.Signals) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert pid_alive(child)
        assert read_pid_file(tmp_path / "agent.pid")["pid"] == child  # type: ignore[index]
        parent.send_signal(how)
        parent.wait(timeout=10)
        assert wait_until(lambda: not pid_alive(child)), "the agent outlived its parent"
    finally:
        parent.kill()
        parent.wait()


# --- a stale agent of the same run ------------------------------------------------------------------


def test_a_stale_agent_with_a_matching_command_line_is_ended_and_its_port_freed(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    port = free_port()
    argv = [sys.executable, "-c", SERVER, str(port)]
    server = spawn(argv, cwd=tmp_path)
    assert server.stdout is not None
    helper = int(server.stdout.readline())
    assert wait_until(lambda: not port_is_free(port))
    pid_file = tmp_path / "agent.pid"
    write_pid_file(pid_file, server.pid, argv, cwd=tmp_path)
    assert recorded_process_alive(read_pid_file(pid_file) or {})

    assert end_stale(pid_file, ports=[port], timeout=10) is True
    server.wait(timeout=5)
    assert not pid_alive(helper)  # the whole group went
    assert group_members(server.pid) == []
    assert port_is_free(port)
    assert not pid_file.exists()


def test_a_reused_pid_is_left_alone(tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]]) -> None:
    other = spawn([sys.executable, "-c", SLEEP])  # some program that got the recorded pid
    pid_file = tmp_path / "agent.pid"
    write_pid_file(pid_file, other.pid, ["/opt/agent/bin/gateway", "run"])  # a different command line
    record = read_pid_file(pid_file)
    assert record is not None
    record["cmdline"] = record["argv"]  # as if recorded from the agent that had this pid before
    pid_file.write_text(json.dumps(record))
    assert not recorded_process_alive(record)

    assert end_stale(pid_file, timeout=1) is False
    assert pid_alive(other.pid)
    assert not pid_file.exists()  # the record is stale either way


def test_same_command_line_but_another_start_time_is_left_alone(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    argv = [sys.executable, "-c", SLEEP]
    other = spawn(argv)
    pid_file = tmp_path / "agent.pid"
    write_pid_file(pid_file, other.pid, argv)
    record = read_pid_file(pid_file)
    assert record is not None and isinstance(record["start_ticks"], int)
    record["start_ticks"] -= 1
    pid_file.write_text(json.dumps(record))

    assert end_stale(pid_file, timeout=1) is False
    assert pid_alive(other.pid)


def test_a_title_the_agent_gives_itself_matches(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    agent = spawn([sys.executable, "-c", SLEEP])
    assert wait_until(lambda: bool(proc_cmdline(agent.pid)))  # empty for a moment after exec
    title = proc_cmdline(agent.pid) or ""
    pid_file = tmp_path / "agent.pid"
    write_pid_file(pid_file, agent.pid, ["node", "openclaw.mjs", "gateway", "run"], titles=[title])
    record = read_pid_file(pid_file)
    assert record is not None
    record["cmdline"] = "node openclaw.mjs gateway run"  # what it was before it renamed itself
    pid_file.write_text(json.dumps(record))

    assert end_stale(pid_file, timeout=5) is True
    agent.wait(timeout=5)


def test_a_script_behind_its_interpreter_matches(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    # Hermes is started as ``.../bin/hermes gateway run``; the kernel shows ``.../python3.11 .../bin/hermes ...``
    script = tmp_path / "agent-script"
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    script.chmod(0o755)
    agent = spawn([str(script), "gateway", "run"])
    pid_file = tmp_path / "agent.pid"
    write_pid_file(
        pid_file, agent.pid, [str(script), "gateway", "run"]
    )  # right after exec, as an adapter does
    record = read_pid_file(pid_file)
    assert record is not None and record["cmdline"].startswith(sys.executable)
    record["cmdline"] = record["argv"]  # as if the kernel had not filled it in yet
    pid_file.write_text(json.dumps(record))

    assert end_stale(pid_file, timeout=5) is True
    agent.wait(timeout=5)


def test_helpers_left_in_the_group_of_a_dead_agent_are_ended(
    tmp_path: Path, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    leader = spawn(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', "
            f"{SLEEP!r}]).pid, flush=True)",
        ],
        cwd=tmp_path,
    )
    assert leader.stdout is not None
    helper = int(leader.stdout.readline())
    argv = ["agent"]
    pid_file = tmp_path / "agent.pid"
    write_pid_file(pid_file, leader.pid, argv, cwd=tmp_path)
    leader.wait(timeout=5)  # the leader is gone, its helper lives on in the group
    assert pid_alive(helper)

    end_stale(pid_file, timeout=5)
    assert wait_until(lambda: not pid_alive(helper))


def test_a_missing_or_corrupt_pid_file_is_harmless(tmp_path: Path) -> None:
    assert end_stale(tmp_path / "agent.pid", timeout=0.1) is False
    (tmp_path / "agent.pid").write_text("not json")
    assert end_stale(tmp_path / "agent.pid", timeout=0.1) is False
    assert not (tmp_path / "agent.pid").exists()


# --- AgentProcess -----------------------------------------------------------------------------------


def test_agent_process_start_records_and_stop_forgets(tmp_path: Path) -> None:
    async def scenario() -> None:
        process = AgentProcess("dummy", tmp_path / "process.log", tmp_path / "agent.pid")
        process.start([sys.executable, "-c", SLEEP], {"PATH": "/usr/bin:/bin"}, tmp_path)
        record = read_pid_file(tmp_path / "agent.pid")
        assert record is not None and record["pid"] == process.pid
        assert recorded_process_alive(record)
        assert os.getpgid(process.pid or 0) == process.pid  # its own process group
        with pytest.raises(AdapterError, match="already running"):
            process.start([sys.executable, "-c", SLEEP], {}, tmp_path)
        assert await process.end_stale() is False  # never its own live process
        await process.stop(grace=2)
        assert not process.alive()
        assert not (tmp_path / "agent.pid").exists()

    asyncio.run(scenario())


def test_agent_process_kill_now_forgets_the_pid_file(tmp_path: Path) -> None:
    process = AgentProcess("dummy", tmp_path / "process.log", tmp_path / "agent.pid")
    process.start([sys.executable, "-c", SLEEP], {"PATH": "/usr/bin:/bin"}, tmp_path)
    process.kill_now()
    assert process.popen is not None and process.popen.wait(timeout=5) == -signal.SIGKILL
    assert not (tmp_path / "agent.pid").exists()


def test_the_child_gets_only_the_environment_it_is_given(tmp_path: Path) -> None:
    process = AgentProcess("dummy", tmp_path / "process.log")
    process.start(
        [sys.executable, "-c", "import os, json; print(json.dumps(sorted(os.environ)))"],
        {"PATH": "/usr/bin:/bin", "ONLY_THIS": "1"},
        tmp_path,
    )
    assert process.popen is not None and process.popen.wait(timeout=10) == 0
    names = json.loads((tmp_path / "process.log").read_text().splitlines()[-1])
    assert set(names) - {"LC_CTYPE"} == {"PATH", "ONLY_THIS"}  # Python may add LC_CTYPE (PEP 538)


def test_a_missing_program_is_an_adapter_error(tmp_path: Path) -> None:
    process = AgentProcess("dummy", tmp_path / "process.log", tmp_path / "agent.pid")
    with pytest.raises(AdapterError, match="did not start"):
        process.start([str(tmp_path / "nope")], {}, tmp_path)
    assert not (tmp_path / "agent.pid").exists()


def test_port_is_free() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_is_free(port)
    assert port_is_free(port)
    assert not port_is_free(0) and not port_is_free(70000)


# --- the log and the pid record never followed through a link (issue 32, item 1) --------------------------


def test_a_link_in_place_of_the_log_or_the_pid_record_is_never_written_through(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("host file\n")
    folder = tmp_path / "adapter"
    folder.mkdir()
    (folder / "process.log").symlink_to(canary)
    (folder / ".agent.pid.tmp").symlink_to(
        tmp_path / "created-by-the-temp-file"
    )  # an older version's temp name
    process = AgentProcess("dummy", folder / "process.log", folder / "agent.pid")
    with pytest.raises(
        AdapterError, match=r"dummy did not start: .*process\.log: Too many levels of symbolic"
    ):
        process.start([sys.executable, "-c", SLEEP], {"PATH": "/usr/bin:/bin"}, tmp_path)
    assert process.popen is None
    (folder / "process.log").unlink()
    (folder / "agent.pid").symlink_to(canary)
    process.start([sys.executable, "-c", SLEEP], {"PATH": "/usr/bin:/bin"}, tmp_path)
    try:
        assert not (folder / "agent.pid").is_symlink()  # replaced by a new file, not written through
        assert (read_pid_file(folder / "agent.pid") or {}).get("pid") == process.pid
    finally:
        process.kill_now()
    assert canary.read_text() == "host file\n" and not (tmp_path / "created-by-the-temp-file").exists()


def test_a_pid_record_or_a_log_that_is_a_link_or_a_fifo_reads_as_nothing(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    write_pid_file(record, os.getpid(), ["python"])
    (tmp_path / "link.json").symlink_to(record)
    os.mkfifo(tmp_path / "fifo")  # nobody writes into it: a blocking open would hang
    started = time.monotonic()
    assert read_pid_file(tmp_path / "link.json") is None and read_pid_file(tmp_path / "fifo") is None
    assert tail(tmp_path / "link.json") == "" and tail(tmp_path / "fifo") == ""
    assert time.monotonic() - started < 5
    assert (read_pid_file(record) or {}).get("pid") == os.getpid() and '"pid"' in tail(record)

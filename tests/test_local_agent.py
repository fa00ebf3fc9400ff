"""What the real-agent adapters share, offline: the minimal environment, the delivery check's reading of an
agent's session, and the agent's folder under attack in whole runs (issue 32: a link planted in place of a
file the engine writes, links and FIFOs in the memory folder, a folder over ``agent_disk_mb``), with a local
process as the agent (``adapters/local/agent.py``). The real agents are exercised in ``tests/agents/``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from engine_helpers import make_config, play

from adapters.base import AdapterContext, AdapterError
from adapters.hermes.adapter import HermesAdapter
from adapters.local.agent import LocalAgentAdapter, delivery_in
from adapters.local.ports import free_port
from adapters.openclaw.adapter import session_of
from engine.autopsy.history import MemoryHistory
from engine.clock import Clock
from engine.events import TerminationReason
from engine.models.base import Message
from engine.models.scripted_recall import answer
from engine.run.loop import Run


def test_the_last_user_message_answered_is_replied() -> None:
    session = [
        ("user", "Hi."),
        ("assistant", "Hello."),
        ("user", "My cat is Zorblax."),
        ("assistant", "Noted."),
    ]
    assert delivery_in(session, "My cat is Zorblax.") == ("replied", "Noted.")
    assert delivery_in(session, "  My cat is Zorblax.\n") == ("replied", "Noted.")  # as the agent trims it


def test_the_last_user_message_without_an_answer_is_unanswered() -> None:
    session = [("user", "Hi."), ("assistant", "Hello."), ("user", "My cat is Zorblax."), ("assistant", "")]
    assert delivery_in(session, "My cat is Zorblax.") == ("unanswered", None)


def test_an_older_message_or_an_empty_session_is_absent() -> None:
    session = [
        ("user", "My cat is Zorblax."),
        ("assistant", "Noted."),
        ("user", "Hi."),
        ("assistant", "Hello."),
    ]
    assert delivery_in(session, "My cat is Zorblax.") == ("absent", None)  # only the last user message counts
    assert delivery_in([], "Hi.") == ("absent", None)


def test_a_message_the_agent_shortened_still_matches() -> None:
    huge = "x" * 70000
    assert delivery_in([("user", huge[:65536]), ("assistant", "Noted.")], huge) == ("replied", "Noted.")
    assert delivery_in([("user", "x" * 100)], "x" * 200) == ("absent", None)


def test_the_agent_environment_is_built_from_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MMB_TEST_SECRET", "do-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-persona")
    monkeypatch.setenv("TZ", "Europe/London")
    monkeypatch.delenv("LANG", raising=False)
    ctx = AdapterContext("r", tmp_path, {"virtual_time": False}, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    adapter = HermesAdapter(ctx)
    env = adapter.process_env(tmp_path / "home", {"OWN": "1"})
    assert set(env) == {"PATH", "HOME", "LANG", "TZ", "OWN"} | ({"TMPDIR", "LC_ALL"} & set(env))
    assert env["HOME"] == str(tmp_path / "home") and env["LANG"] == "C.UTF-8" and env["TZ"] == "Europe/London"


async def test_check_delivery_is_unknown_without_a_running_agent(tmp_path: Path) -> None:
    ctx = AdapterContext("r", tmp_path, {}, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    assert await HermesAdapter(ctx).check_delivery("Hi.") == "unknown"


def test_openclaws_own_recovery_note_does_not_hide_a_message_it_answered() -> None:
    """After a gateway restart OpenClaw resumes an interrupted turn with its own "[System] …" user message
    and answers it: the persona's message is then delivered and answered, not absent (sent twice)."""
    history = [
        {"role": "user", "content": "What is my gym locker number?"},
        {
            "role": "user",
            "content": "[System] Your previous turn was interrupted by a gateway restart. Continue.",
        },
        {"role": "assistant", "content": [{"type": "toolCall", "name": "memory_search"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "My gym locker is number 212."}]},
    ]
    session = session_of(history)
    assert session == [
        ("user", "What is my gym locker number?"),
        ("assistant", "My gym locker is number 212."),
    ]
    assert delivery_in(session, "What is my gym locker number?") == (
        "replied",
        "My gym locker is number 212.",
    )
    assert delivery_in(session_of(history[:2]), "What is my gym locker number?") == ("unanswered", None)


async def test_the_agent_state_says_what_is_true_of_a_process_and_its_server(tmp_path: Path) -> None:
    # issue 23, finding 10: an error said "<agent> is running" of a gateway that was gone or not answering
    ctx = AdapterContext("r", tmp_path, {}, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    adapter = HermesAdapter(ctx)  # its "gateway": a sleeping process, its /health never listening
    adapter.port = free_port()
    umask = os.umask(0o022)
    os.umask(umask)
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    adapter.process.start(command, {"PATH": os.defpath}, tmp_path)
    try:
        state = await adapter.agent_state()
        assert f"the gateway is down: nothing listens at http://127.0.0.1:{adapter.port}/health" in state
        assert f"though its process (pid {adapter.process.pid}) still runs" in state
        assert adapter.process.pid is not None
        os.killpg(adapter.process.pid, signal.SIGKILL)
        error = await adapter.request_failed("chat request", ConnectionResetError("reset"))
        assert "hermes: chat request failed: ConnectionResetError('reset'); the gateway is down: " in str(
            error
        )
        assert "hermes agent exited with code -9" in str(error) and "is running" not in str(error)
    finally:
        await adapter.close()
        os.umask(umask)  # the agent's start set this process's own (``PrivateAgentProcess``)


# --- the agent's folder under attack, in whole runs (issue 32) -----------------------------------------------

AGENT_SCRIPT = "import time; print('agent up', flush=True); time.sleep(600)"
CANARY = "host file: must stay byte-identical\n"
SECRET = "root-only-secret-7d31"


class FolderAgent(LocalAgentAdapter):
    """A real local process as the agent (it sleeps), answered by lexical recall in the engine, which writes its
    config and keeps its memory in its home as Hermes does; each subclass's ``attack`` is what a hostile agent
    does with its own tools at its second message. Named ``test_local_agent:<class>`` in configs; the run key
    ``host`` is the folder of the host files it aims at."""

    name = "folder-agent"

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.host = Path(str(ctx.options["host"]))
        self.context: list[Message] = []
        self.messages = 0

    async def start_session(self, name: str) -> None:
        self.folder.write_text("home/config.json", '{"port": 1}\n')  # as Hermes' .env and config.yaml
        if not self.process.alive():
            self.process.start(
                [sys.executable, "-c", AGENT_SCRIPT], self.process_env(self.agent_dir, {}), tmp()
            )
            await self.up()

    async def up(self) -> None:
        """Wait for its first line, as a real adapter waits for its gateway's health (a loaded machine may not
        have run it yet when the attack kills it)."""
        deadline = time.monotonic() + 60
        while "agent up" not in self.process.log_path.read_text(errors="replace"):
            assert time.monotonic() < deadline and self.process.alive(), "the agent never said it was up"
            await asyncio.sleep(0.05)

    async def send_message(self, text: str) -> None:
        await self.before_message()
        self.messages += 1
        if self.messages == 2:
            self.attack(self.agent_dir / "home")
        self.context += [{"role": "user", "content": text}]
        reply = answer(self.context)
        self.context += [{"role": "assistant", "content": reply}]
        self.folder.write_text("home/memories/MEMORY.md", f"{reply}\n")
        self.record_reply(reply)

    async def destroy_session(self) -> None:
        self.wipe_agent_dir()

    def snapshot_memory(self, label: str) -> Path | None:
        return self.copy_memory(label, [], [(Path("home/memories"), ".md", "")])

    def attack(self, home: Path) -> None:
        """What the agent does to its own folder (subclasses)."""


class LinkPlanter(FolderAgent):
    """Replaces its config with a link to a host file, forges a pid record and a log in its folder, then kills
    its own process: the engine revives it."""

    def attack(self, home: Path) -> None:
        (home / "config.json").unlink()
        (home / "config.json").symlink_to(self.host / "canary.txt")
        (self.agent_dir / "agent.pid").write_text(
            json.dumps({"pid": 1, "pgid": 1, "cmdline": "x", "cwd": "/"})
        )
        (self.agent_dir / "process.log").symlink_to(self.host / "canary.txt")
        assert self.process.pid is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        raise AdapterError(f"{self.name}: chat request failed: ConnectionResetError()")


class MemoryLinker(FolderAgent):
    """Points its memory at a host file only root may read, and fills it with a link to a host folder."""

    def attack(self, home: Path) -> None:
        (home / "memories" / "USER.md").symlink_to(self.host / "secret.txt")
        (home / "memories" / "host.md").symlink_to(self.host)
        os.mkfifo(home / "memories" / "pipe.md")


class Filler(FolderAgent):
    """Writes 3 MB into its folder."""

    def attack(self, home: Path) -> None:
        (home / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))


def tmp() -> Path:
    return Path(os.environ.get("TMPDIR") or "/tmp")


@pytest.fixture
def host(tmp_path: Path) -> Path:
    outside = tmp_path / "host"
    outside.mkdir()
    (outside / "canary.txt").write_text(CANARY)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "secret.txt").chmod(0o600)
    return outside


async def play_attacked(tmp_path: Path, host: Path, agent: str, **keys: object) -> tuple[Run, Path]:
    run_keys = {"benchmark": "agent_smoke", "agent": f"test_local_agent:{agent}", "host": str(host), **keys}
    config = make_config(tmp_path, {"r": {**run_keys, "virtual_time": False, "agent_sandbox": "none"}})
    run = await play(config, "r")
    assert (host / "canary.txt").read_text() == CANARY and sorted(p.name for p in host.iterdir()) == [
        "canary.txt",
        "secret.txt",
    ]
    for path in config.results_path().rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET not in path.read_text(errors="replace"), path
    return run, config.results_path() / "r"


async def test_a_link_planted_in_place_of_a_config_is_refused_and_the_run_waits_naming_it(
    tmp_path: Path, host: Path
) -> None:
    run, run_dir = await play_attacked(tmp_path, host, "LinkPlanter")
    assert run.termination is TerminationReason.WAITING and run.state.status == "waiting"
    refused = f"refused {run_dir / 'agent' / 'home' / 'config.json'}: a symbolic link"
    assert refused in run.state.reason and "not started again" in run.state.reason, run.state.reason
    log = (run_dir / "adapter" / "process.log").read_text()  # the engine's own log, out of the agent's reach
    assert log.count("agent up") == 1 and (run_dir / "agent" / "process.log").is_symlink()
    assert not (run_dir / "adapter" / "agent.pid").exists()  # the process ended: its own record went with it


async def test_links_in_the_memory_folder_are_left_out_of_the_memory_and_its_history(
    tmp_path: Path, host: Path
) -> None:
    run, run_dir = await play_attacked(tmp_path, host, "MemoryLinker")
    assert run.termination is TerminationReason.FINISHED, run.state.reason
    history = MemoryHistory(run_dir)  # the memory the run kept after every message (stored compressed)
    snapshots = history.snapshots()
    assert snapshots and {name for shot in snapshots for name in shot.files} == {"MEMORY.md"}  # the rest: out
    assert all(SECRET not in (history.text(shot, "MEMORY.md") or "") for shot in snapshots)
    adapter = run.adapter
    assert isinstance(adapter, FolderAgent)
    snapshot = adapter.snapshot_memory("end")
    assert snapshot is not None and sorted(p.name for p in snapshot.iterdir()) == ["MEMORY.md", "skipped.txt"]
    note = (snapshot / "skipped.txt").read_text()
    assert (
        "USER.md: a symbolic link" in note
        and "host.md: a symbolic link" in note
        and "pipe.md: a FIFO" in note
    )


async def test_an_agent_folder_over_its_size_makes_the_run_wait_naming_the_folder_and_the_size(
    tmp_path: Path, host: Path
) -> None:
    run, run_dir = await play_attacked(tmp_path, host, "Filler", agent_disk_mb=2)
    assert run.termination is TerminationReason.WAITING
    assert f"the agent's folder {run_dir / 'agent'} holds 3.0 MB in " in run.state.reason, run.state.reason
    assert "over agent_disk_mb (2 MB)" in run.state.reason
    (tmp_path / "again").mkdir()
    run, _ = await play_attacked(tmp_path / "again", host, "Filler", agent_disk_mb=4)
    assert run.termination is TerminationReason.FINISHED, run.state.reason

"""Letta Code 0.34.12 driven by the letta adapter: one sandboxed headless call per message, on ``scripted/agent`` or
on the ``tool_model`` that makes it use its own tools (``MMB-CALL <tool> <json>``).

Marked ``agents``. The pinned install is made on first use (``adapters.local.install``) and cached in ``$MMB_AGENTS_DIR``.
What is checked is read where Letta keeps it: its conversations (``messages.jsonl``), its MemFS folder (a git
repository), its compiled system prompt.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import SECRET, ask, assert_boxed, scaled, stored_last
from tool_model import ToolModelServer

from adapters.base import AdapterContext, AdapterError
from adapters.letta.adapter import LettaAdapter
from adapters.letta.store import STORE, agent_ids, conversations, entries, memory_dir, message_of, user_text
from adapters.local.agent_pid import pid_alive
from adapters.local.install import install_letta
from adapters.local.sandbox.policy import CHECKOUT
from engine.clock import Clock

pytestmark = pytest.mark.agents

Factory = Callable[..., LettaAdapter]
FACT_LINE = "- my cat is called Zorblax"


@pytest.fixture(scope="module", autouse=True)
def letta_installed() -> None:
    install_letta()


@pytest.fixture
def adapter_class() -> type[LettaAdapter]:
    """The adapter ``make_adapter`` and ``make_tool_adapter`` make (``conftest.py``)."""
    return LettaAdapter


def bash(command: str) -> str:
    """A message that makes the tool model call Letta's own shell (its ``Bash`` wants a description)."""
    return f"MMB-CALL Bash {json.dumps({'command': command, 'description': 'as asked'})}"


def memory_path(adapter: LettaAdapter) -> Path:
    return adapter.agent_dir / memory_dir(adapter.where.agent_id)


def user_messages(adapter: LettaAdapter, conversation: str) -> list[str]:
    """The user's messages Letta stored in ``conversation`` (its reminders left out)."""
    found = {c.id: c for c in conversations(adapter.folder, adapter.where.agent_id)}
    stored = [message_of(entry) for entry in entries(adapter.folder, found[conversation])]
    return [user_text(message) for message in stored if message is not None and message.get("role") == "user"]


def system_prompt(adapter: LettaAdapter, conversation: str) -> str:
    found = {c.id: c for c in conversations(adapter.folder, adapter.where.agent_id)}
    return (adapter.agent_dir / found[conversation].folder / "system-prompt.json").read_text()


async def remember_with_its_tools(adapter: LettaAdapter) -> None:
    """The agent writes a fact into its MemFS with its own ``Write`` and commits it with its own shell."""
    if not adapter.where.agent_id:
        assert await ask(adapter, "Hello there.") == "Noted."  # the first message makes the agent
    memory = memory_path(adapter)
    content = f"# Memory\n{FACT_LINE}\n"
    await ask(
        adapter, f"MMB-CALL Write {json.dumps({'file_path': str(memory / 'MEMORY.md'), 'content': content})}"
    )
    home = memory.relative_to(
        adapter.home
    )  # the command said from its home: short whatever the test's folder
    await ask(adapter, bash(f"cd ~/{home} && git add -A && git commit -qm 'a fact' && git log --oneline"))


# --- chat and conversations ----------------------------------------------------------------------------


async def test_a_plain_chat_round_trip(make_adapter: Factory) -> None:
    adapter = make_adapter()
    await adapter.create_session("round trip")
    assert await ask(adapter, "Hello there.") == "Noted."
    assert await ask(adapter, "- milk\n- eggs, and --new is not an option here.") == "Noted."
    assert [r.seq for r in await adapter.get_responses(0)] == [1, 2]
    conversation = adapter.where.conversation_id
    assert user_messages(adapter, conversation) == [
        "Hello there.",
        "- milk\n- eggs, and --new is not an option here.",
    ]
    status = await adapter.get_status()
    assert status is not None and status.state == "sleeping"
    assert status.context_tokens and status.context_tokens > 1000  # its system prompt alone is ~24K tokens
    assert not (adapter.own_dir / "agent.pid").exists()  # no process between messages


async def test_a_new_conversation_keeps_the_memory_and_clears_the_context(
    make_tool_adapter: Factory,
) -> None:
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("conversations")
    await ask(adapter, "My favourite colour is teal.")
    await remember_with_its_tools(adapter)
    first, agent = adapter.where.conversation_id, adapter.where.agent_id
    await adapter.start_new_conversation()
    assert await ask(adapter, "Good morning.") == "Noted."
    second = adapter.where.conversation_id
    assert second != first and adapter.where.agent_id == agent  # same agent, same memory
    assert user_messages(adapter, second) == ["Good morning."]  # nothing of the first conversation
    assert "teal" in " ".join(user_messages(adapter, first))
    assert FACT_LINE in system_prompt(adapter, second)  # the committed memory reaches the new one
    assert [c.id for c in conversations(adapter.folder, agent)] == [first, second]


async def test_a_full_reset_is_a_fresh_state_folder(make_tool_adapter: Factory) -> None:
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("reset")
    await remember_with_its_tools(adapter)
    old_agent = adapter.where.agent_id
    await adapter.destroy_session()
    assert not (adapter.agent_dir / STORE).exists()
    await adapter.create_session("after reset")
    assert await ask(adapter, "Hello again.") == "Noted."
    assert adapter.where.agent_id not in ("", old_agent)
    assert agent_ids(adapter.folder) == [adapter.where.agent_id]
    assert FACT_LINE not in (memory_path(adapter) / "MEMORY.md").read_text()


async def test_its_clock_follows_virtual_time(make_tool_adapter: Factory) -> None:
    adapter = make_tool_adapter(model="tools")
    await adapter.set_virtual_time("2031-03-14T09:30:00")
    await adapter.create_session("time")
    assert "2031-03-14" in await ask(adapter, bash("date +%F"))
    stored = entries(adapter.folder, conversations(adapter.folder, adapter.where.agent_id)[0])
    assert "March 14, 2031" in json.dumps(stored)  # Letta's own "Local time" reminder, from its bundled Node
    await adapter.set_virtual_time("2031-03-20T18:00:00")
    assert "2031-03-20" in await ask(adapter, bash("date +%F"))


# --- resuming: a kill -9 of the engine mid-call -----------------------------------------------------------


async def test_a_call_killed_with_the_engine_resumes_without_a_message_twice(
    make_tool_adapter: Factory,
) -> None:
    first = make_tool_adapter(model="tools")
    await first.create_session("kill")
    assert await ask(first, "Hello there.") == "Noted."
    before_send = first.export_state()  # the checkpoint written before the next send
    slow = bash("tail -f /dev/null")  # a call that never ends (Letta refuses a foreground ``sleep`` at once)
    sending = asyncio.ensure_future(first.send_message(slow))
    await stored_last(first, slow, 20)  # Letta stored it, its model asked for the shell: the call runs
    pid = first.process.pid
    assert pid is not None and pid_alive(pid)
    first.process.popen = None  # the engine is gone: nothing of it stops the call, its pid file stays
    with pytest.raises(AdapterError):
        await sending

    resumed = make_tool_adapter(model="tools")  # the run started again over the same folder
    resumed.import_state(before_send)
    await resumed.create_session("kill")
    assert not pid_alive(pid)  # the call the dead engine left running is ended first
    assert await resumed.check_delivery("Something never sent.") == "absent"
    assert await resumed.check_delivery(slow) == "unanswered"  # stored, never answered
    assert await ask(resumed, "Hello after the kill.") == "Noted."
    stored = user_messages(resumed, resumed.where.conversation_id)
    assert stored == ["Hello there.", slow, "Hello after the kill."]  # each once


async def test_a_first_call_whose_result_was_lost_is_collected_not_sent_again(make_adapter: Factory) -> None:
    first = make_adapter()
    await first.create_session("lost result")
    fresh = first.export_state()  # no agent yet: the first message makes it
    assert await ask(first, "I moved to Leeds.") == "Noted."
    await first.close()

    resumed = make_adapter()
    resumed.import_state(fresh)
    await resumed.create_session("lost result")
    before = resumed.next_seq - 1
    assert await resumed.check_delivery("I moved to Leeds.") == "replied"  # its agent and conversation found
    assert [r.text for r in await resumed.get_responses(before)] == ["Noted."]
    assert resumed.where.agent_id == first.where.agent_id
    assert resumed.where.conversation_id == first.where.conversation_id
    assert await ask(resumed, "And I bought a bike.") == "Noted."
    assert len(agent_ids(resumed.folder)) == 1


async def test_a_reply_past_its_timeout_is_killed_and_left_unanswered(make_adapter: Factory) -> None:
    # a scripted model with options is served to Letta under a plain name its /v1/models lists
    adapter = make_adapter(model="scripted/agent?faults=1:hang", reply_timeout=scaled(8))
    await adapter.create_session("hang")
    with pytest.raises(AdapterError, match="no reply to a message"):
        await adapter.send_message("Are you there?")
    assert not adapter.process.alive() and not adapter.thinking
    await adapter.close()  # the run's revive
    await adapter.create_session("hang")
    assert await adapter.check_delivery("Are you there?") == "unanswered"


# --- memory ---------------------------------------------------------------------------------------------


async def test_memory_snapshots_copy_its_memfs_working_tree(make_tool_adapter: Factory) -> None:
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("snapshot")
    await remember_with_its_tools(adapter)
    memory = memory_path(adapter)
    await ask(adapter, bash(f"mkdir -p {memory}/system && echo 'lives in Leeds' > {memory}/system/places.md"))
    await ask(adapter, bash(f"ln -s /etc/passwd {memory}/planted.md"))
    folder = adapter.snapshot_memory("phase 1")
    assert folder == adapter.ctx.run_dir / "memory" / "phase_1"
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert names == ["MEMORY.md", "human.md", "persona.md", "skipped.txt", "system/places.md"]  # never .git
    assert FACT_LINE in (folder / "MEMORY.md").read_text()
    assert (
        "planted.md" in (folder / "skipped.txt").read_text()
        and "symbolic link" in (folder / "skipped.txt").read_text()
    )
    files = adapter.memory_files()
    assert files is not None and FACT_LINE in files["MEMORY.md"].decode() and "planted.md" not in files


async def test_its_own_actions_are_read_from_its_transcript(make_tool_adapter: Factory) -> None:
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("actions")
    await remember_with_its_tools(adapter)
    actions = await adapter.agent_actions()
    assert actions is not None
    assert [(a.tool, a.kind, a.target) for a in actions] == [
        ("Write", "memory write", "MEMORY.md"),
        ("Bash", "command", ""),
    ]
    assert "Zorblax" in actions[0].summary and "git commit" in actions[1].summary
    assert await adapter.agent_actions() == []  # each read once
    await ask(adapter, f"MMB-CALL Read {json.dumps({'file_path': str(memory_path(adapter) / 'MEMORY.md')})}")
    assert [(a.kind, a.target) for a in await adapter.agent_actions() or []] == [("memory read", "MEMORY.md")]


# --- the sandbox -------------------------------------------------------------------------------------------


async def test_its_own_tools_run_in_the_sandbox(
    make_tool_adapter: Factory, tool_model: ToolModelServer, tmp_path: Path
) -> None:
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("sandbox")
    other_run = tmp_path / "other-run"  # beside this run's folder: another run's results
    other_run.mkdir()
    (other_run / "secret.txt").write_text("another run's transcript")
    probe = Path.home() / f"mmb-letta-probe-{os.getpid()}"
    command = (
        f"echo remembered > $HOME/note.md; cat {CHECKOUT}/README.md > $HOME/checkout.txt 2>&1; "
        f"ls {other_run} > $HOME/other-run.txt 2>&1; touch {probe} 2> $HOME/user-home.txt; "
        "readlink /proc/self/ns/mnt /proc/self/ns/pid > $HOME/namespaces.txt"
    )
    try:
        await ask(adapter, bash(command))
        outside = tmp_path / "outside.md"
        await ask(adapter, f"MMB-CALL Write {json.dumps({'file_path': str(outside), 'content': 'x'})}")
        assert not probe.exists() and not outside.exists()  # writes outside its folder fail
    finally:
        probe.unlink(missing_ok=True)
    seen = {p.stem: p.read_text() for p in adapter.home.glob("*.*") if p.suffix in (".md", ".txt")}
    assert_boxed(seen, adapter)
    assert {"Bash", "Write", "Edit", "Read"} <= set().union(*tool_model.offered)
    lines = adapter.setup_lines()
    assert lines[0].startswith("Agent sandbox: bubblewrap") and lines[1].startswith("Agent tools: Bash, Read")


async def test_its_shell_can_be_taken_away(make_tool_adapter: Factory, tmp_path: Path) -> None:
    adapter = make_tool_adapter(model="tools", letta_host_tools=False)
    await adapter.create_session("no shell")
    reply = await ask(adapter, bash(f"echo ran > {adapter.home}/ran.txt"))
    assert not (adapter.home / "ran.txt").exists() and "denied" in reply.lower(), reply
    assert "Bash" not in adapter.tools_offered()


async def test_its_environment_is_built_from_nothing(
    make_tool_adapter: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET, "do-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-persona-key")
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("env")
    seen = await ask(adapter, bash("env | sort"))
    assert SECRET not in seen and "sk-persona-key" not in seen
    assert f"HOME={adapter.home}" in seen and "LETTA_CODE_TELEM=0" in seen
    auth = (adapter.agent_dir / STORE / "providers" / "auth.json").read_text()
    assert '"key": "k"' not in auth


async def test_the_models_key_never_reaches_the_run_folder(
    make_tool_adapter: Factory, tool_model: ToolModelServer
) -> None:
    # Letta reads its provider's key from a file of its home (no environment variable): the sandbox shows the
    # keyed file over the run folder's blank one while a call runs
    adapter = make_tool_adapter(model="tools")
    await adapter.create_session("key")
    assert await ask(adapter, "Hello there.") == "Noted."  # its agent made
    auth = adapter.agent_dir / STORE / "providers" / "auth.json"
    seen_on_disk: list[str] = []
    calling = asyncio.ensure_future(ask(adapter, bash(f"cat {auth}; timeout 3 tail -f /dev/null")))
    while not calling.done():
        seen_on_disk.append(auth.read_text())
        await asyncio.sleep(0.05)
    assert '"key": "k"' in await calling  # what the agent reads in its sandbox
    assert len(seen_on_disk) > 20 and not any('"key": "k"' in text for text in seen_on_disk)
    assert tool_model.authorizations and set(tool_model.authorizations) == {"Bearer k"}
    for path in adapter.ctx.run_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert b'"key": "k"' not in path.read_bytes() or path.name == "transcript.jsonl", path


def test_run_keys_are_checked(tmp_path: Path) -> None:
    def make(**options: Any) -> LettaAdapter:
        ctx = AdapterContext("r", tmp_path, options, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
        return LettaAdapter(ctx)

    with pytest.raises(
        ValueError, match=r"^letta_bogus: unknown option .*; reply_timeout: .*; letta_host_tools"
    ):
        make(letta_bogus=1, reply_timeout=0, letta_host_tools="yes")
    with pytest.raises(ValueError, match='letta_host_tools: agent_sandbox "none" runs Letta Code'):
        make(agent_sandbox="none")
    with pytest.raises(ValueError, match="letta_host_tools: agent_sandbox"):
        make(agent_sandbox="none", letta_host_tools=False)  # its file tools would still reach any file
    unboxed = make(agent_sandbox="none", letta_host_tools=True)
    assert unboxed.setup_lines()[0] == "Agent sandbox: none (the agent runs with its user's rights)"

"""OpenClaw 2026.9.6 (Node 24) driven by the openclaw adapter against the scripted agent model.

Slow integration tests (a real gateway per test, ~10-25 s to start, ~1 GB RAM): marked ``agents``. The pinned
installs are made on first use (``adapters.local.install``) and cached in ``$MMB_AGENTS_DIR`` between runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import (
    COMMON_ENV,
    FACT,
    LONG_WORDS,
    QUESTION,
    SECRET,
    ask,
    assert_boxed,
    check_delivery_scenario,
    environ_of,
    group_pids,
    sandbox_scenario,
    scaled,
    state_saying,
    stored_last,
    until,
)
from tool_model import ToolModelServer

from adapters.base import AdapterContext, AdapterError
from adapters.local.agent_pid import pid_alive
from adapters.local.install import install_openclaw, openclaw_command
from adapters.local.process import terminate
from adapters.openclaw.adapter import API_KEY_ENV, OpenClawAdapter
from engine.clock import Clock

pytestmark = pytest.mark.agents


@pytest.fixture(scope="module", autouse=True)
def openclaw_installed() -> None:
    install_openclaw()


Factory = Callable[..., OpenClawAdapter]


@pytest.fixture
def adapter_class() -> type[OpenClawAdapter]:
    """The adapter ``make_adapter`` and ``make_tool_adapter`` make (``conftest.py``)."""
    return OpenClawAdapter


async def test_round_trip_and_memory_across_a_reset_conversation(make_adapter: Factory) -> None:
    adapter = make_adapter()
    await adapter.create_session("memory")
    assert await ask(adapter, "Hello there.") == "Noted."
    assert await ask(adapter, FACT) == "Saved."
    assert "Zorblax" in (adapter.workspace / "MEMORY.md").read_text()
    await ask(adapter, "My favourite colour is teal.")
    assert "teal" in await ask(adapter, "What is my favourite colour?")
    await adapter.start_new_conversation()  # sessions.reset over the gateway WebSocket
    assert "teal" not in await ask(adapter, "What is my favourite colour?")
    assert "Zorblax" in await ask(adapter, QUESTION)
    folder = adapter.snapshot_memory("phase-2")
    assert folder is not None and "Zorblax" in (folder / "MEMORY.md").read_text()
    assert folder == adapter.ctx.run_dir / "memory" / "phase-2"
    files = [path for path in adapter.ctx.run_dir.rglob("*") if path.is_file()]
    assert len(files) < 200, "the run folder holds more than the agent's state (its browser UI's assets?)"


async def test_full_reset_and_virtual_time(make_adapter: Factory) -> None:
    adapter = make_adapter()
    await adapter.set_virtual_time("2031-03-14T09:30:00")
    await adapter.create_session("reset")
    assert "2031-03-14" in await ask(adapter, "What is the date today?")
    await ask(adapter, FACT)
    await adapter.set_virtual_time("2031-03-20T09:30:00")
    assert "2031-03-20" in await ask(adapter, "What is the date today?")  # stamped on every message
    await adapter.destroy_session()
    assert not adapter.process.alive() and not (adapter.workspace / "MEMORY.md").exists()
    await adapter.create_session("after reset")
    assert "Zorblax" not in await ask(adapter, QUESTION)


async def test_compaction_is_observed_and_reported(make_adapter: Factory) -> None:
    # safeguard mode: a pre-prompt "budget" compaction once the session passes contextWindow - reserve
    # (~20.5K of 32K); its summary comes from the scripted model. Success is logged at debug level only,
    # so the adapter reads the compaction row of the agent's SQLite transcript.
    adapter = make_adapter(openclaw_context_window=32768, openclaw_keep_recent_tokens=4000)
    await adapter.create_session("compaction")
    compactions = []
    for turn in range(8):
        filler = " ".join(f"{LONG_WORDS[(i + turn) % 10]}{i}" for i in range(1500))
        assert await ask(adapter, f"Part {turn} of my notes. {filler}") == "Noted."
        status = await adapter.get_status()
        assert status is not None and status.state == "sleeping"
        compactions += [o for o in status.observations if o.kind == "compaction"]
        if compactions:
            break
    assert compactions, "no compaction observed"
    first = compactions[0]
    assert first.detail.startswith("compacted"), first
    assert first.tokens_before and first.tokens_after and first.tokens_after < first.tokens_before
    assert first.tokens_before > 32768 - 20000  # past the threshold
    status = await adapter.get_status()
    assert status is not None and status.observations == []  # each compaction is reported once
    await ask(adapter, "Part 9 of my notes. Nothing else.")  # the compacted session goes on


async def test_crash_mid_run_raises(make_adapter: Factory) -> None:
    adapter = make_adapter()
    await adapter.create_session("crash")
    assert adapter.process.pid is not None
    os.killpg(adapter.process.pid, signal.SIGKILL)
    await until(lambda: not adapter.process.alive(), 5, "the killed gateway's exit")
    with pytest.raises(AdapterError, match="not running"):
        await adapter.send_message("are you there?")


async def test_an_error_says_whether_the_gateway_is_stopping_or_down(make_adapter: Factory) -> None:
    # issue 23, finding 10: right after its gateway was killed, a run waited "… openclaw agent is running"
    adapter = make_adapter(model="scripted/agent?faults=1:hang")
    await adapter.create_session("stopped")
    await state_saying(adapter, "the gateway is up", 5)
    sending = asyncio.ensure_future(
        adapter.send_message("Are you there?")
    )  # the model hangs: a turn in flight
    await stored_last(adapter, "Are you there?", 6)
    assert adapter.process.pid is not None
    terminate(
        adapter.process.pid
    )  # as a stop does: the gateway drains its turn before it stops (up to 5 min)
    state = await state_saying(adapter, "the gateway is stopping or restarting", 5)
    assert "gateway-draining" in state and "still runs" in state, state
    os.killpg(adapter.process.pid, signal.SIGKILL)
    with pytest.raises(AdapterError) as failed:
        await sending
    message = str(failed.value)
    assert (
        "chat request failed" in message
        and "the gateway is down: openclaw agent exited with code -9" in message
    )
    assert "is running" not in message


def test_options_are_validated(tmp_path: Path) -> None:
    def make(**options: Any) -> OpenClawAdapter:
        ctx = AdapterContext("r", tmp_path, options, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
        return OpenClawAdapter(ctx)

    with pytest.raises(ValueError, match="openclaw_heartbeat"):
        make(openclaw_heartbeat="often")
    with pytest.raises(ValueError, match="openclaw_context_window"):
        make(openclaw_context_window=100)
    with pytest.raises(ValueError, match="openclaw_dreaming"):
        make(openclaw_dreaming=1)
    with pytest.raises(
        ValueError,
        match=r"^openclaw_bogus, nope: unknown options .*; openclaw_context_window: .*; openclaw_dreaming: ",
    ):
        make(openclaw_bogus=1, nope=2, openclaw_dreaming=1, openclaw_context_window=100)  # every one named


# --- restarts: the same port and an accepted config ------------------------------------------------


def _clobbered(adapter: OpenClawAdapter) -> list[str]:
    """Signs that OpenClaw rejected the config: its clobbered copies and its restore warnings."""
    found = [p.name for p in adapter.home.glob("openclaw.json.clobbered*")]
    log = adapter.log_path.read_text(encoding="utf-8", errors="replace") if adapter.log_path.exists() else ""
    return found + [line[:200] for line in log.splitlines() if "auto-restore" in line or "clobbered" in line]


async def test_a_resumed_adapter_keeps_the_port_and_the_conversation_or_moves_off_a_taken_port(
    make_adapter: Factory,
) -> None:
    first = make_adapter()
    await first.create_session("resume")
    await ask(first, "My favourite colour is teal.")
    port = first.port
    await first.close()  # the run stops (Ctrl-C) ...

    second = make_adapter()  # ... and is started again: a new adapter over the same run folder
    await second.create_session("resume")
    assert second.port == port
    assert "teal" in await ask(second, "What is my favourite colour?")  # the same session, from disk
    assert _clobbered(second) == []
    await second.close()
    config = second.config_path.read_text()
    # changed run keys: merged into OpenClaw's file, its meta kept
    third = make_adapter(openclaw_keep_recent_tokens=12345, openclaw_compaction=False)
    await third.create_session("resume")
    assert third.port == port and '"keepRecentTokens": 12345' in third.config_path.read_text()
    assert json.loads(third.config_path.read_text())["agents"]["defaults"]["compaction"]["enabled"] is False
    assert config != third.config_path.read_text() and '"meta"' in third.config_path.read_text()
    assert _clobbered(third) == []
    await third.close()
    with socket.socket() as squatter:  # another program took the port between two starts: the gateway moves
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        fourth = make_adapter()
        await fourth.create_session("resume")
        assert fourth.port != port
        assert "teal" in await ask(fourth, "What is my favourite colour?")
        assert _clobbered(fourth) == []


async def test_a_gateway_left_running_is_ended_before_the_next_start(make_adapter: Factory) -> None:
    # an engine that lost track of its gateway (killed without the death signal reaching it)
    first = make_adapter()
    await first.create_session("stale")
    stale_pid = first.process.pid
    assert stale_pid is not None and (first.own_dir / "agent.pid").exists()
    first.process.popen = None  # forget it without stopping it

    second = make_adapter()
    await second.create_session("stale")
    assert second.port == first.port
    assert not pid_alive(stale_pid)
    assert await ask(second, "Hello there.") == "Noted."


# --- the box: environment and host tools -----------------------------------------------------------

OPENCLAW_ENV = {
    "OPENCLAW_STATE_DIR",
    "OPENCLAW_CONFIG_PATH",
    "OPENCLAW_GATEWAY_TOKEN",
    "OPENCLAW_NO_AUTO_UPDATE",
    "OPENCLAW_DISABLE_BONJOUR",
    API_KEY_ENV,
}


async def test_the_gateway_gets_a_minimal_environment(
    make_adapter: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET, "do-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-persona-key")
    adapter = make_adapter()
    await adapter.create_session("env")
    assert await ask(adapter, "Hello there.") == "Noted."
    assert adapter.process.pid is not None
    pids = group_pids(adapter.process.pid)
    assert adapter.process.pid in pids
    gateway = environ_of(adapter.process.pid)
    assert set(gateway) - COMMON_ENV - OPENCLAW_ENV == set()  # exactly what the adapter handed over
    assert gateway["HOME"] == str(adapter.home)
    for pid in pids:  # its helpers get what it adds itself (NODE_COMPILE_CACHE, ...), nothing of the engine's
        environ = environ_of(pid)
        assert set(environ) & set(os.environ) <= COMMON_ENV | OPENCLAW_ENV, pid
        assert SECRET not in environ and "sk-persona-key" not in environ.values()


async def test_host_tools_can_be_switched_off(
    make_tool_adapter: Factory, tool_model: ToolModelServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    adapter = make_tool_adapter(model="tools", openclaw_host_tools=False)
    await adapter.create_session("boxed")
    assert "Saved." == await ask(adapter, FACT)  # memory still works: file tools inside the workspace
    assert "Zorblax" in (adapter.workspace / "MEMORY.md").read_text()
    offered = set().union(*tool_model.offered)
    assert offered.isdisjoint({"exec", "process", "code_execution", "browser", "web_fetch", "web_search"})
    assert offered.isdisjoint({"gateway", "cron", "openclaw", "plugins"})

    forced = {
        "exec": {"command": f"id > {outside}/exec"},
        "bash": {"command": f"id > {outside}/bash"},
        "process": {"action": "start", "command": f"id > {outside}/process"},
        "tool_call": {"id": "exec", "args": {"command": f"id > {outside}/tool_call"}},
        "write": {"path": f"{outside}/write", "content": "x"},
        "edit": {"path": f"{outside}/../outside/edit", "oldText": "", "newText": "x"},
        "read": {"path": "/etc/hostname"},
    }
    for tool, arguments in forced.items():
        await ask(adapter, f"MMB-CALL {tool} {json.dumps(arguments)}")
    assert sorted(p.name for p in outside.iterdir()) == []  # nothing ran, nothing was written
    assert len(tool_model.tool_results) == len(forced)
    for result in tool_model.tool_results:
        assert re.search(r"not found|Unknown tool|escapes sandbox|denied|not allowed", result, re.I), result
    assert socket.gethostname() not in "".join(tool_model.tool_results)


async def test_its_own_tools_are_on_inside_the_sandbox(
    make_tool_adapter: Factory, tool_model: ToolModelServer, tmp_path: Path
) -> None:
    # as the seed measured it: OpenClaw as it ships, its shell and files anywhere, boxed by bubblewrap
    adapter = make_tool_adapter(model="tools")
    seen = await sandbox_scenario(adapter, "exec", tmp_path)
    assert "exec" in set().union(*tool_model.offered)
    assert_boxed(seen, adapter)
    config = json.loads(adapter.config_path.read_text())
    assert config["tools"]["fs"]["workspaceOnly"] is False and config["tools"]["deny"] == []
    lines = adapter.setup_lines()
    assert lines[0].startswith("Agent sandbox: bubblewrap")
    assert lines[1] == "Agent tools: memory, workspace files, shell, files, browser, web"


def test_host_tools_option_is_validated(tmp_path: Path) -> None:
    def make(**options: Any) -> OpenClawAdapter:
        ctx = AdapterContext("r", tmp_path, options, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
        return OpenClawAdapter(ctx)

    assert make().settings.host_tools == {"shell", "files", "browser", "web"}  # on, in the sandbox
    assert make(agent_sandbox="none").settings.host_tools == frozenset()  # off without one
    assert make(agent_sandbox="none", openclaw_host_tools=["shell"]).settings.host_tools == {"shell"}
    assert make(openclaw_host_tools=True).settings.host_tools == {"shell", "files", "browser", "web"}
    assert make(openclaw_host_tools=["web"]).settings.host_tools == {"web"}
    with pytest.raises(ValueError, match="openclaw_host_tools"):
        make(openclaw_host_tools=["exec"])
    with pytest.raises(ValueError, match="openclaw_host_tools"):
        make(openclaw_host_tools="yes")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"openclaw_compaction": False, "openclaw_memory_flush": False, "openclaw_dreaming": True},
        {"openclaw_host_tools": True, "openclaw_heartbeat": "30m"},
        {"openclaw_host_tools": ["files", "web"], "openclaw_context_window": 32768},
    ],
)
def test_openclaw_accepts_the_config(tmp_path: Path, options: dict[str, Any]) -> None:
    # `openclaw config validate` on the config the adapter writes for these run keys
    ctx = AdapterContext("r", tmp_path, options, Clock(), lambda name: None)  # type: ignore[arg-type,return-value]
    adapter = OpenClawAdapter(ctx)
    adapter.home.mkdir(parents=True)
    adapter.port = 18789
    adapter._write_config({"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "k"})
    env = adapter._env({"api_key": "k"})
    done = subprocess.run(
        [*openclaw_command(), "config", "validate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(40),
    )
    assert "Config valid" in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]


async def test_a_message_sent_again_is_checked_against_the_agents_session(make_adapter: Factory) -> None:
    await check_delivery_scenario(make_adapter)

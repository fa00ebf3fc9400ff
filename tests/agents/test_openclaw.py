"""OpenClaw 2026.9.6 (Node 24) driven by the openclaw adapter against the scripted agent model.

Slow integration tests (a real gateway per test, ~10-25 s to start, ~1 GB RAM): marked ``agents``. The pinned
installs are made on first use (``adapters.install``) and cached in ``$MMB_AGENTS_DIR`` between runs.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import FACT, LONG_WORDS, QUESTION, adapter_factory, ask

from adapters.base import AdapterContext, AdapterError
from adapters.install import install_openclaw
from adapters.openclaw import OpenClawAdapter
from engine.clock import Clock

pytestmark = pytest.mark.agents


@pytest.fixture(scope="module", autouse=True)
def openclaw_installed() -> None:
    install_openclaw()


Factory = Callable[..., OpenClawAdapter]


@pytest.fixture
async def make_adapter(tmp_path: Path) -> AsyncIterator[Factory]:
    async for factory in adapter_factory(OpenClawAdapter, "openclaw-test", tmp_path):
        yield factory


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
    await asyncio.sleep(0.5)
    with pytest.raises(AdapterError, match="not running"):
        await adapter.send_message("are you there?")


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

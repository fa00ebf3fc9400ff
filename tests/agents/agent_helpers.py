"""What the real-agent integration tests share: an adapter factory that always cleans up, ``ask``, and the
checks of the box an agent runs in (its environment, its processes)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from adapters.base import AdapterContext, AdapterError
from adapters.local_agent import LocalAgentAdapter
from engine.clock import Clock

FACT = "Remember that my cat is called Zorblax."
QUESTION = "What is my cat called?"
LONG_WORDS = "harbour lantern quartz meadow falcon ember glacier orchid cobalt thistle".split()

A = TypeVar("A", bound=LocalAgentAdapter)


async def adapter_factory(
    cls: type[A], run_id: str, tmp_path: Path, endpoints: dict[str, dict[str, str]] | None = None
) -> AsyncIterator[Callable[..., A]]:
    """Yields ``factory(**options) -> adapter``; every adapter made is closed and its process gone after.

    ``endpoints``: models of a pretend ``config.jsonc`` (name -> base_url, model, api_key), e.g. a
    ``ToolModelServer``; ``scripted/agent`` needs none."""
    made: list[A] = []
    known = endpoints or {}

    def factory(**options: Any) -> A:
        ctx = AdapterContext(
            run_id=run_id,
            run_dir=tmp_path / "run",
            options=options,
            clock=Clock(),
            make_model=lambda name: None,  # type: ignore[arg-type,return-value]
            model_endpoint=lambda name: known.get(name, {}),
        )
        adapter = cls(ctx)
        made.append(adapter)
        return adapter

    yield factory
    for adapter in made:
        await adapter.close()
        assert not adapter.process.alive()


async def ask(adapter: LocalAgentAdapter, text: str) -> str:
    """Send ``text``; the replies are numbered in order and the last one is returned."""
    before = adapter.next_seq - 1
    await adapter.send_message(text)
    replies = await adapter.get_responses(before)
    assert [r.seq for r in replies] == list(range(before + 1, adapter.next_seq))
    return replies[-1].text


# --- the box ---------------------------------------------------------------------------------------

SECRET = "MMB_TEST_SECRET"
# what any agent process may inherit (adapters/local_agent.py PASSED_ENV, HOME, the libfaketime recipe)
COMMON_ENV = {
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "LD_PRELOAD",
    "FAKETIME_TIMESTAMP_FILE",
    "FAKETIME_NO_CACHE",
    "FAKETIME_DONT_FAKE_MONOTONIC",
}


def environ_of(pid: int) -> dict[str, str]:
    """The environment ``pid`` was started with (``/proc/<pid>/environ``)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.decode("utf-8", errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def group_pids(pgid: int) -> list[int]:
    """The live processes of group ``pgid`` (an agent and the helpers it started)."""
    from adapters.process import group_members

    return group_members(pgid)


async def check_delivery_scenario(factory: Callable[..., LocalAgentAdapter]) -> None:
    """Before a message is sent again, the agent's own session says whether it arrived (issue 11, finding 12).

    Answered and then the run restarted: "replied" (the reply is recorded again, nothing is re-sent); never
    sent: "absent"; sent, then the model hung past ``reply_timeout`` and the run revived the agent:
    "unanswered" (the agent keeps the message; sending it again would put it there twice).
    """
    adapter = factory()
    await adapter.create_session("delivery")
    assert await ask(adapter, "Hello there.") == "Noted."
    await adapter.close()

    # the engine killed after the send: a new adapter over the same folder (its model server will hang)
    resumed = factory(model="scripted/agent?faults=1:hang", reply_timeout=8)
    resumed.import_state(adapter.export_state())
    await resumed.create_session("delivery")
    before = resumed.next_seq - 1
    assert await resumed.check_delivery("Hello there.") == "replied"
    assert [r.text for r in await resumed.get_responses(before)] == ["Noted."]
    assert await resumed.check_delivery("Something never sent.") == "absent"

    with pytest.raises(AdapterError, match="no reply"):
        await resumed.send_message("My favourite colour is teal.")  # the model hangs
    await resumed.close()  # the run's revive
    await resumed.create_session("delivery")
    assert await resumed.check_delivery("My favourite colour is teal.") == "unanswered"
    session = await resumed.session_messages()
    assert session is not None and session[-1] == ("user", "My favourite colour is teal.")

"""What the real-agent integration tests share: an adapter factory that always cleans up, and ``ask``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from adapters.base import AdapterContext
from adapters.local_agent import LocalAgentAdapter
from engine.clock import Clock

FACT = "Remember that my cat is called Zorblax."
QUESTION = "What is my cat called?"
LONG_WORDS = "harbour lantern quartz meadow falcon ember glacier orchid cobalt thistle".split()

A = TypeVar("A", bound=LocalAgentAdapter)


async def adapter_factory(cls: type[A], run_id: str, tmp_path: Path) -> AsyncIterator[Callable[..., A]]:
    """Yields ``factory(**options) -> adapter``; every adapter made is closed and its process gone after."""
    made: list[A] = []

    def factory(**options: Any) -> A:
        ctx = AdapterContext(
            run_id=run_id,
            run_dir=tmp_path / "run",
            options=options,
            clock=Clock(),
            make_model=lambda name: None,
        )  # type: ignore[arg-type,return-value]
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

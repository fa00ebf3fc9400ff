"""Starting a phase: its js block (sandboxed), its gates, and its text as the persona sees it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from engine.benchmark.directives import directives_of
from engine.benchmark.jsblock import JsBlockError, run_block
from engine.benchmark.model import Benchmark
from engine.events import ErrorOccurred, Event, PhaseStarted
from engine.grading import contract as grading
from engine.run.phases import render_phase, session_switch_note
from engine.state import RunState

_VARS = ("require_all_facts", "require_all_checks")


class _JsHost:
    """``bench.newSession()`` for a phase's js block; remembers whether the agent's session switched."""

    def __init__(self, new_session: Callable[[], Awaitable[bool]]) -> None:
        self._new_session = new_session
        self.switched = False

    async def new_session(self) -> None:
        self.switched = await self._new_session() or self.switched


async def start_phase(
    state: RunState,
    bench: Benchmark,
    index: int,
    new_session: Callable[[], Awaitable[bool]],
    emit: Callable[[Event], None],
    clears_context: bool = True,
) -> None:
    """Make phase ``index`` current: run its js block, keep its gates, render its text, emit ``PhaseStarted``.

    A js error is reported with its chapter line and the phase goes on without the block's vars. After a
    session switch the persona is told what it means for this agent: ``clears_context`` (the adapter's
    ``supports_new_conversation``) says whether the assistant no longer sees the conversation or still does.
    """
    phase = bench.phases[index]
    state.phase_index = index
    state.phases_started = max(state.phases_started, index + 1)
    state.persona_turns_in_phase = 0
    state.phase_first_message = state.messages_sent
    grading.forget_exchange(state)
    vars_: dict[str, Any] = {}
    host = _JsHost(new_session)
    if phase.js:
        try:
            vars_ = await run_block(phase.js, host)
        except JsBlockError as exc:
            line = phase.js_line + exc.line - 1 if exc.line else phase.js_line - 1  # 0: the whole block
            emit(ErrorOccurred(message=f"{phase.chapter}:{line}: {exc}", where="js"))
    state.phase_vars = {k: v for k, v in vars_.items() if k in _VARS}
    directed = bool(directives_of(bench, index))
    text = render_phase(phase, len(bench.phases), state.start_date, state.phase_vars, directed)
    if host.switched:
        text += f"\n\n[Platform note: {session_switch_note(clears_context)}]"
    state.phase_text = text
    emit(
        PhaseStarted(
            index=index, total=len(bench.phases), chapter=phase.chapter, title=phase.title, text=text
        )
    )

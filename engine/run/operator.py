"""Operator commands: queued by a front end, applied between persona turns, each recorded as an
``OperatorActed`` event and answered with a ``CommandResult`` (done, or refused and why) once applied; and
pausing before the next persona turn. A pause cuts the call in flight short (``engine/run/liveness.py``), so
it never waits behind a hung call: the loop pauses at once and makes the call again on resume. ``AbortCall``
acts at once: the call in flight is cut short and made again now, or the back-off after a failure ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from engine.agents import AgentAdapter
from engine.commands import (
    AbortCall,
    AddFact,
    Command,
    CommandResult,
    EditFact,
    NewSession,
    NextPhase,
    Pause,
    PersonaNote,
    Resume,
)
from engine.events import CutShort, OperatorActed, OperatorAction
from engine.persona.notebook import Notebook, ToolError
from engine.run.phases import session_switch_note
from engine.run.recorder import Recorder


class OperatorHost(Recorder, Protocol):
    """What the desk needs of a run to apply a command: its record, and these."""

    notebook: Notebook
    adapter: AgentAdapter

    def append_message(self, message: dict[str, Any], phase_start: bool = False) -> None: ...
    async def tool_next_phase(self, force: bool = False) -> str: ...
    async def new_session(self, by_operator: bool = False) -> bool: ...


def _call_name(what: CutShort) -> str:
    if what == "back-off":
        return "the back-off"
    return "the wait for the agent's reply" if what == "agent reply" else f"the {what} call"


class OperatorDesk:
    def __init__(self, run: OperatorHost) -> None:
        self.run = run
        self.queue: asyncio.Queue[tuple[Command, asyncio.Future[CommandResult]]] = asyncio.Queue()
        self.paused = False
        self.pause_pending = False  # a pause queued, applied before the persona's next turn
        self._resumed = asyncio.Event()
        self._backing_off: asyncio.Event | None = None  # set to end the back-off under way
        self._cut_for_pause: CutShort = ""  # what the pending pause cut short

    def command(self, command: Command) -> asyncio.Future[CommandResult]:
        """Queue ``command``; the future says what became of it once applied."""
        outcome: asyncio.Future[CommandResult] = asyncio.get_running_loop().create_future()
        if isinstance(command, Resume):  # must work while the run waits for it
            outcome.set_result(self._resume())
            return outcome
        if isinstance(command, AbortCall):  # must work while the run waits for a call
            outcome.set_result(self._abort())
            return outcome
        if isinstance(command, Pause) and not self.paused:
            self.pause_pending = self.run.liveness.pausing = True  # a call about to start waits for none
            cut = self.run.liveness.interrupt("pause")
            if cut and cut != "virtual sleep":
                self._cut_for_pause = cut
            elif self._end_back_off():
                self._cut_for_pause = "back-off"
        self.queue.put_nowait((command, outcome))
        return outcome

    def _abort(self) -> CommandResult:
        cut: CutShort = ""
        if (call := self.run.liveness.interrupt("abort")) and call != "virtual sleep":
            cut, detail = call, f"{_call_name(call)} was cut short: tried again now"
        elif self._end_back_off():
            cut, detail = "back-off", "the back-off was cut short: the next attempt is made now"
        else:
            return CommandResult(ok=False, message="the run waits for no model or agent call")
        self.run.emit(OperatorActed(action="abort_call", detail=detail, cut=cut))
        return CommandResult(ok=True, message=detail)

    def _end_back_off(self) -> bool:
        if self._backing_off is None or self._backing_off.is_set():
            return False
        self._backing_off.set()
        return True

    async def back_off(self, seconds: float) -> None:
        """The wait before the next attempt after a failure: ``seconds``, or until ``AbortCall`` or a pause; the
        run's activity while it lasts (``back-off``, with its end: the views count down "retrying in …")."""
        self._backing_off = ended = asyncio.Event()
        try:
            with self.run.liveness.waiting("back-off", ends_in=seconds):
                await asyncio.wait_for(ended.wait(), seconds)
        except TimeoutError:
            pass
        finally:
            self._backing_off = None

    async def apply_queued(self) -> None:
        while not self.queue.empty():
            await self._apply_one(*self.queue.get_nowait())

    async def _apply_one(self, command: Command, outcome: asyncio.Future[CommandResult]) -> None:
        result = await self.apply(command)
        if not outcome.done():
            outcome.set_result(result)

    def _resume(self) -> CommandResult:
        if not self.paused:
            if self.pause_pending:  # a pause not applied yet: taken back
                self.pause_pending = self.run.liveness.pausing = False
                self._cut_for_pause = ""
                return CommandResult(ok=True, message="the pending pause is cancelled")
            return CommandResult(ok=False, message="the run is not paused")
        self.paused = False
        self._resumed.set()
        self.run.emit(OperatorActed(action="resume"))
        return CommandResult(ok=True, message="resumed")

    async def wait_resumed(self) -> None:
        """Paused: apply commands as they come, until the operator resumes."""
        run = self.run
        run.set_status("paused", "paused by the operator")
        run.save()
        self._resumed.clear()
        while self.paused:
            waiter = asyncio.ensure_future(self._resumed.wait())
            getter = asyncio.ensure_future(self.queue.get())
            done, _ = await asyncio.wait({waiter, getter}, return_when=asyncio.FIRST_COMPLETED)
            for task in (waiter, getter):
                if task not in done:
                    task.cancel()
            if getter in done:
                await self._apply_one(*getter.result())
        run.set_status("running")
        run.save()  # the resume on record: a kill from here on does not take it back

    async def apply(self, command: Command) -> CommandResult:
        run = self.run
        match command:
            case Pause():
                self.paused, self.pause_pending, run.liveness.pausing = True, False, False
                cut, self._cut_for_pause = self._cut_for_pause, ""
                done = f"{_call_name(cut)} was cut short: made again on resume" if cut else ""
                run.emit(OperatorActed(action="pause", detail=done, cut=cut))
                result = CommandResult(ok=True, message=done or "paused before the persona's next turn")
            case Resume():
                result = self._resume()
            case NextPhase(force=force):
                try:
                    text = await run.tool_next_phase(force=force)
                except ToolError as exc:
                    run.emit(OperatorActed(action="next_phase", detail=f"refused: {exc}"))
                    return CommandResult(ok=False, message=str(exc))
                how = "forced" if force else "gates passed"
                run.emit(OperatorActed(action="next_phase", detail=how))
                run.append_message(
                    {"role": "user", "content": f"[Operator: the scenario moves on.]\n\n{text}"},
                    phase_start=not run.state.finished,
                )
                done = "the benchmark is finished" if run.state.finished else "moved to the next phase"
                result = CommandResult(ok=True, message=f"{done} ({how})")
            case EditFact(sheet=sheet, fact_id=fact_id, text=text):
                result = self._change_sheet("edit_fact", lambda: run.notebook.edit(sheet, fact_id, text))
            case AddFact(sheet=sheet, category=category, text=text):
                result = self._change_sheet("add_fact", lambda: run.notebook.add(sheet, category, text))
            case NewSession():
                run.emit(OperatorActed(action="new_session"))
                if await run.new_session(by_operator=True):
                    clears = run.adapter.supports_new_conversation
                    note = session_switch_note(clears)
                    run.append_message({"role": "user", "content": f"[Platform note: {note}]"})
                    result = CommandResult(
                        ok=True,
                        message="the agent is in a new session"
                        if clears
                        else f"{run.adapter.name} has no sessions: its context stays as it is"
                        " (the persona is told that it still sees the whole chat)",
                    )
                else:
                    result = CommandResult(
                        ok=False, message="this run ignores session breaks: the agent keeps its session"
                    )
            case PersonaNote(text=text):
                run.emit(OperatorActed(action="persona_note", detail=text))
                run.append_message({"role": "user", "content": f"[A note for you from the operator: {text}]"})
                result = CommandResult(ok=True, message="the persona will read the note on its next turn")
        run.save()
        return result

    def _change_sheet(self, action: OperatorAction, change: Callable[[], str]) -> CommandResult:
        """An operator's edit of a live sheet: applied at once, and the persona is told."""
        try:
            result = change()
        except ToolError as exc:
            self.run.emit(OperatorActed(action=action, detail=f"refused: {exc}"))
            return CommandResult(ok=False, message=str(exc))
        self.run.emit(OperatorActed(action=action, detail=result))
        self.run.append_message({"role": "user", "content": f"[Platform note: your sheet changed. {result}]"})
        return CommandResult(ok=True, message=result)

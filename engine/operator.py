"""Operator commands: queued by a front end, applied between persona turns, each recorded as an
``OperatorActed`` event; and pausing before the next persona turn."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from engine.commands import AddFact, Command, EditFact, NewSession, NextPhase, Pause, PersonaNote, Resume
from engine.events import OperatorActed, OperatorAction
from engine.persona.notebook import Notebook, ToolError
from engine.phases import SESSION_SWITCH_NOTE
from engine.recorder import Recorder


class OperatorHost(Recorder, Protocol):
    """What the desk needs of a run to apply a command: its record, and these."""

    notebook: Notebook

    def append_message(self, message: dict[str, Any], phase_start: bool = False) -> None: ...
    async def tool_next_phase(self, force: bool = False) -> str: ...
    async def new_session(self, by_operator: bool = False) -> bool: ...


class OperatorDesk:
    def __init__(self, run: OperatorHost) -> None:
        self.run = run
        self.queue: asyncio.Queue[Command] = asyncio.Queue()
        self.paused = False
        self._resumed = asyncio.Event()

    def command(self, command: Command) -> None:
        if isinstance(command, Resume):  # must work while the run waits for it
            self._resume()
            return
        self.queue.put_nowait(command)

    async def apply_queued(self) -> None:
        while not self.queue.empty():
            await self.apply(self.queue.get_nowait())

    def _resume(self) -> None:
        if self.paused:
            self.paused = False
            self._resumed.set()
            self.run.emit(OperatorActed(action="resume"))

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
                await self.apply(getter.result())
        run.set_status("running")

    async def apply(self, command: Command) -> None:
        run = self.run
        match command:
            case Pause():
                self.paused = True
                run.emit(OperatorActed(action="pause"))
            case Resume():
                self._resume()
            case NextPhase(force=force):
                try:
                    text = await run.tool_next_phase(force=force)
                except ToolError as exc:
                    run.emit(OperatorActed(action="next_phase", detail=f"refused: {exc}"))
                    return
                run.emit(OperatorActed(action="next_phase", detail="forced" if force else "gates passed"))
                run.append_message(
                    {"role": "user", "content": f"[Operator: the scenario moves on.]\n\n{text}"},
                    phase_start=not run.state.finished,
                )
            case EditFact(sheet=sheet, fact_id=fact_id, text=text):
                self._change_sheet("edit_fact", lambda: run.notebook.edit(sheet, fact_id, text))
            case AddFact(sheet=sheet, category=category, text=text):
                self._change_sheet("add_fact", lambda: run.notebook.add(sheet, category, text))
            case NewSession():
                run.emit(OperatorActed(action="new_session"))
                if await run.new_session(by_operator=True):
                    run.append_message({"role": "user", "content": f"[Platform note: {SESSION_SWITCH_NOTE}]"})
            case PersonaNote(text=text):
                run.emit(OperatorActed(action="persona_note", detail=text))
                run.append_message({"role": "user", "content": f"[A note for you from the operator: {text}]"})
        run.save()

    def _change_sheet(self, action: OperatorAction, change: Callable[[], str]) -> None:
        """An operator's edit of a live sheet: applied at once, and the persona is told."""
        try:
            result = change()
        except ToolError as exc:
            self.run.emit(OperatorActed(action=action, detail=f"refused: {exc}"))
            return
        self.run.emit(OperatorActed(action=action, detail=result))
        self.run.append_message({"role": "user", "content": f"[Platform note: your sheet changed. {result}]"})

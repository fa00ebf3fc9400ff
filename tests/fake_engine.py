"""``FakeEngine``: implements ``EngineApi`` for the TUI tests and the transcript benchmark
(``bench/tui_transcript.py``). It records every command and call, writes events to
``results/<id>/transcript.jsonl`` like the real engine, and records each command in the transcript as an
``OperatorActed`` event; a refusal is set per command kind (``refusals``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from engine.api import Observer, RunView
from engine.commands import Command, CommandResult
from engine.config import Config
from engine.events import (
    Event,
    OperatorActed,
    StatusChanged,
)


class FakeEngine:
    """Holds ``RunView``s; commands are recorded and applied crudely (pause, resume, next phase)."""

    def __init__(self, results_dir: Path, views: list[RunView] | None = None) -> None:
        self.results_dir = results_dir
        self.views: dict[str, RunView] = {view.run_id: view for view in views or []}
        self.observers: list[Observer] = []
        self.commands: list[tuple[str, Command]] = []
        self.refusals: dict[str, str] = {}  # command kind -> the engine's reason to refuse it
        self.started: list[str] = []
        self.restarted: list[str] = []
        self.reloaded: list[Config] = []
        self.stop_all_calls = 0
        self._n: dict[str, int] = {}
        self.write_files = True

    # ---- EngineApi ----
    def run_ids(self) -> list[str]:
        return list(self.views)

    def view(self, run_id: str) -> RunView:
        return self.views[run_id]

    def add_observer(self, observer: Observer) -> None:
        self.observers.append(observer)

    async def start(self, run_id: str) -> None:
        self.started.append(run_id)
        self.set_status(run_id, "running")
        await asyncio.sleep(0)

    async def restart(self, run_id: str) -> None:
        self.restarted.append(run_id)
        path = self.transcript_path(run_id)
        if path.exists():
            path.unlink()
        self._n[run_id] = 0
        self.views[run_id] = self.views[run_id].model_copy(update={"evaluations": 0, "average": None})
        self.set_status(run_id, "running")
        await asyncio.sleep(0)

    async def command(self, run_id: str, command: Command) -> CommandResult:
        if run_id not in self.views:
            raise KeyError(run_id)
        self.commands.append((run_id, command))
        refusal = self.refusals.get(command.kind)
        if refusal is not None:
            self.emit(run_id, OperatorActed(action=command.kind, detail=f"refused: {refusal}"))
            return CommandResult(ok=False, message=refusal)
        detail = json.dumps(command.model_dump(exclude={"kind"}), ensure_ascii=False)
        self.emit(run_id, OperatorActed(action=command.kind, detail=detail))
        if command.kind == "pause":
            self.set_status(run_id, "paused")
        elif command.kind == "resume":
            self.set_status(run_id, "running")
        elif command.kind == "next_phase":
            view = self.views[run_id]
            self.views[run_id] = view.model_copy(update={"phase_index": view.phase_index + 1, "gates": []})
        return CommandResult(ok=True, message=f"{command.kind} applied")

    async def stop_all(self) -> None:
        self.stop_all_calls += 1
        for run_id, view in self.views.items():
            if view.status in ("running", "waiting"):
                self.views[run_id] = view.model_copy(update={"status": "paused", "reason": "stopped"})
        await asyncio.sleep(0)

    async def reload(self, config: Config) -> None:
        self.reloaded.append(config)
        for run_id, run in config.runs.items():
            if run_id not in self.views:
                self.views[run_id] = RunView(run_id=run_id, benchmark=run.benchmark, agent=run.agent)

    # ---- helpers for tests ----
    def transcript_path(self, run_id: str) -> Path:
        return self.results_dir / run_id / "transcript.jsonl"

    def set_status(self, run_id: str, status: str, reason: str = "") -> None:
        view = self.views[run_id]
        self.views[run_id] = view.model_copy(update={"status": status, "reason": reason})
        self.emit(run_id, StatusChanged(status=status, reason=reason))  # type: ignore[arg-type]

    def emit(self, run_id: str, event: Event) -> Event:
        """Stamp, append to the transcript file, and tell the observers."""
        self._n[run_id] = self._n.get(run_id, 0) + 1
        event.n = self._n[run_id]
        if not event.t:
            event.t = self.views[run_id].clock or "2026-08-19T10:00:00"
        if self.write_files:
            path = self.transcript_path(run_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(event.model_dump_json() + "\n")
        for observer in self.observers:
            observer.on_event(run_id, event)
        return event

    def transcript_events(self, run_id: str) -> list[dict[str, object]]:
        path = self.transcript_path(run_id)
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

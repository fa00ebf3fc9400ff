"""``results/<run-id>/state.json``: the whole resumable state of a run, written atomically.

It stays bounded as a run grows: the full history lives in ``transcript.jsonl``; here are only the
persona's (compacted) context, the live sheets, the evaluations and cursors.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from engine.benchmark.model import Sheet
from engine.events import AgentCompacted, EvaluationLogged, RunStatus
from engine.models.base import Message

STATE_VERSION = 1


def _upgrade_records(data: Any) -> Any:
    """State written before evaluations and agent compactions were stored as their events."""
    if isinstance(data, dict):
        for record in (data.get("evaluations") or {}).values():
            if isinstance(record, dict) and "transcript_n" in record:
                record.setdefault("n", record.pop("transcript_n"))
    return data


class RunState(BaseModel):
    _upgrade = model_validator(mode="before")(_upgrade_records)

    version: int = STATE_VERSION
    run_id: str
    benchmark: str
    agent: str
    start_date: date  # fixes {{TODAY}} and friends for the whole run, resumes included
    clock_offset: float = 0.0
    clock_now: str = ""  # virtual time at the last save: a resumed virtual-time run continues from it
    clock_jumps: int = Field(default=0, ge=0)
    status: RunStatus = "idle"
    reason: str = ""
    finished: bool = False

    phase_index: int = Field(default=0, ge=0)  # the current phase (0-based)
    phases_started: int = Field(default=0, ge=0)
    phase_vars: dict[str, Any] = Field(default_factory=dict)
    phase_text: str = ""  # the current phase as the persona saw it

    persona_messages: list[Message] = Field(default_factory=list)  # the context after the system prompt
    phase_starts: list[int] = Field(default_factory=list)  # indexes in persona_messages where phases begin
    persona_turns_in_phase: int = Field(default=0, ge=0)

    sheets: dict[str, Sheet] = Field(default_factory=dict)  # live copies
    loaded_sheets: list[str] = Field(default_factory=list)
    told: dict[str, list[str]] = Field(default_factory=dict)

    evaluations: dict[str, EvaluationLogged] = Field(default_factory=dict)  # the latest grade per check id
    # what the grading contract and the trap-write gates read (SPEC §4 as amended: strict grading)
    messages_sent: int = Field(default=0, ge=0)  # persona messages delivered to the agent, over the whole run
    phase_first_message: int = 0  # messages_sent when the current phase began
    changed_at: dict[str, int] = Field(
        default_factory=dict
    )  # "sheet id" -> messages_sent when last edited/added
    last_replies: list[str] = Field(
        default_factory=list
    )  # the agent's replies to the latest message (bounded)
    sent_since_grade: list[str] = Field(
        default_factory=list
    )  # persona messages since the last grade (bounded)
    graded_at: dict[str, int] = Field(default_factory=dict)  # check id -> messages_sent at its last grade
    persona_compactions: int = Field(default=0, ge=0)
    agent_observations: list[AgentCompacted] = Field(default_factory=list)
    agent_seq: int = Field(default=0, ge=0)
    adapter_state: dict[str, Any] = Field(default_factory=dict)

    usage: dict[str, Any] = Field(default_factory=dict)
    run_seconds: float = Field(default=0.0, ge=0)  # real time spent running, over all sessions
    transcript_bytes: int = Field(
        default=0, ge=0
    )  # the transcript's committed length (later bytes are rolled back on resume)
    transcript_events: int = Field(default=0, ge=0)
    reported: bool = False
    pending_report: str = ""  # an entry saved with this checkpoint, appended to report.md right after


class StateError(Exception):
    pass


class StateSaveError(StateError):
    """A checkpoint could not be written: the message names the file and the reason."""


def atomic_write(path: Path, data: str) -> None:
    """Temp file in the same folder, fsync, rename: a reader sees the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_stale_temp_files(run_dir: Path) -> None:
    """Temporary files of writes a kill interrupted (only the lock holder may call this)."""
    for stale in run_dir.glob(".state.json.*"):
        stale.unlink(missing_ok=True)


def save_state(path: Path, state: RunState) -> None:
    atomic_write(path, state.model_dump_json())


class StateWriter:
    """Writes snapshots of a run's state off the event loop, latest wins.

    The snapshot is serialised at once (so it is exactly the state of that moment); the fsync'ed
    atomic write runs in a worker thread. A snapshot taken while a write is in flight replaces any
    older one still waiting. Whatever is on disk is always one complete checkpoint: a kill resumes
    from it and replays the rest, as if it had come a moment earlier.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pending: str | None = None
        self._task: asyncio.Task[None] | None = None
        self.failure = ""  # why the latest write failed ("" after a success): the run must not go on

    def save(self, state: RunState) -> None:
        self._pending = state.model_dump_json()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (tools, tests): write now
            data, self._pending = self._pending, None
            atomic_write(self.path, data)
            return
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._pending is not None:
            data, self._pending = self._pending, None
            try:
                await asyncio.to_thread(atomic_write, self.path, data)
            except OSError as exc:
                self.failure = f"{self.path}: {exc.strerror or exc}"
                return
            self.failure = ""

    async def flush(self) -> None:
        """Wait until the latest snapshot is on disk."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)
        if self._pending is not None:
            data, self._pending = self._pending, None
            try:
                atomic_write(self.path, data)
            except OSError as exc:
                self.failure = f"{self.path}: {exc.strerror or exc}"
            else:
                self.failure = ""
        if self.failure:
            raise StateSaveError(self.failure)


def load_state(path: Path) -> RunState | None:
    if not path.exists():
        return None
    try:
        return RunState.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        why = f"{where}: {first['msg']}"
    except (ValueError, OSError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    raise StateError(f"{path}: unreadable run state ({why}); delete the folder to restart")

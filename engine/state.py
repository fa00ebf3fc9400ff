"""``results/<run-id>/state.json``: the resumable state of a run, written atomically, and reading it back.

It stays bounded as a run grows: the full history lives in ``transcript.jsonl``. ``state.json`` holds the
cursors, the clock and the current phase; what grows with a run (the fields in ``JOURNALED``: the persona's
context, the live sheets, told marks and change stamps, the evaluations and when each was graded, the
judge's grades, the agent's compactions) lives in the append-only ``journal.<n>.jsonl`` that the checkpoint
names with the length it covers (``engine/run/checkpoint.py`` writes it). A state written before the journal holds
them itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError, model_validator

from engine.benchmark.model import Sheet
from engine.events import AgentCompacted, EvaluationLogged, JudgeGraded, RunStatus
from engine.models.base import Message
from engine.persona_record import PersonaRecord

STATE_VERSION = 1
JOURNALED = frozenset(
    {
        "persona_messages",
        "sheets",
        "told",
        "changed_at",
        "evaluations",
        "graded_at",
        "judge_grades",
        "agent_observations",
        "sent_log",
    }
)
"""Fields kept in the journal, not in ``state.json`` (once the state has a journal)."""


def _upgrade_records(data: Any) -> Any:
    """State written before evaluations and agent compactions were stored as their events."""
    if isinstance(data, dict):
        for record in (data.get("evaluations") or {}).values():
            if isinstance(record, dict) and "transcript_n" in record:
                record.setdefault("n", record.pop("transcript_n"))
    return data


class SentMessage(BaseModel):
    """A message the agent received, as a premise reads it (``engine/grading/premises.py``)."""

    n: int  # its transcript number (the ``message_sent`` event)
    phase: int  # the phase it was sent in (0-based)
    keys: str  # what it says, as space-separated keys (``engine/grading/told_values.py``)


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
    sent_log: list[SentMessage] = Field(default_factory=list)  # every message the agent received, as keys
    judge_grades: dict[str, JudgeGraded] = Field(default_factory=dict)  # the judge's latest grade per check
    persona_compactions: int = Field(default=0, ge=0)
    agent_observations: list[AgentCompacted] = Field(default_factory=list)
    persona_record: PersonaRecord | None = None  # slips and new sessions, counted as recorded (None: not yet)
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
    journal: int = Field(default=0, ge=0)  # generation of the journal holding JOURNALED (0: none, all here)
    journal_bytes: int = Field(default=0, ge=0)  # the journal's length this checkpoint covers


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


def journal_path(run_dir: Path, generation: int) -> Path:
    return run_dir / f"journal.{generation}.jsonl"


def checkpoint_json(state: RunState) -> str:
    """``state.json``'s text: without the journaled fields once the state has a journal."""
    return state.model_dump_json(exclude=set(JOURNALED) if state.journal else None)


class JournalFiles(Protocol):
    """What the writer makes durable besides ``state.json`` (``engine/run/checkpoint.py`` ``Journal``)."""

    def sync(self, generation: int, length: int) -> None: ...  # on disk before a checkpoint names it
    def prune(self, generation: int) -> None: ...  # older generations, once a checkpoint names a newer one


class StateWriter:
    """Writes snapshots of a run's state off the event loop, latest wins.

    The snapshot is serialised at once (so it is exactly the state of that moment); the fsync'ed
    atomic write runs in a worker thread, after the journal it names is synced. A snapshot taken while a
    write is in flight replaces any older one still waiting. Whatever is on disk is always one complete
    checkpoint: a kill resumes from it and replays the rest, as if it had come a moment earlier.
    """

    def __init__(self, path: Path, journal: JournalFiles | None = None) -> None:
        self.path = path
        self.journal = journal
        self._pending: tuple[str, int, int] | None = None  # state.json's text, its journal and length
        self._task: asyncio.Task[None] | None = None
        self.failure = ""  # why the latest write failed ("" after a success): the run must not go on

    def save(self, state: RunState) -> None:
        self._pending = (checkpoint_json(state), state.journal, state.journal_bytes)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (tools, tests): write now
            self._write_pending()
            return
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())

    def _write(self, data: str, generation: int, length: int) -> None:
        """The journal first (its failure is a ``StateSaveError`` naming it), then ``state.json``."""
        if self.journal is not None and generation:
            self.journal.sync(generation, length)
        try:
            atomic_write(self.path, data)
        except OSError as exc:
            raise StateSaveError(f"{self.path}: {exc.strerror or exc}") from None
        if self.journal is not None and generation:
            self.journal.prune(generation)

    def _write_pending(self) -> None:
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        try:
            self._write(*pending)
        except StateSaveError as exc:
            self.failure = str(exc)
        else:
            self.failure = ""

    async def _drain(self) -> None:
        while self._pending is not None:
            pending, self._pending = self._pending, None
            try:
                await asyncio.to_thread(self._write, *pending)
            except StateSaveError as exc:
                self.failure = str(exc)
                return
            self.failure = ""

    async def flush(self) -> None:
        """Wait until the latest snapshot is on disk."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)
        self._write_pending()
        if self.failure:
            raise StateSaveError(self.failure)


def load_state(path: Path) -> RunState | None:
    """The checkpoint at ``path`` with its journal read up to the length it names; None if there is none."""
    missing = ""
    for _ in range(5):  # a reader may meet a journal that a newer checkpoint has just replaced: read again
        try:
            return _read_state(path)
        except FileNotFoundError as exc:
            missing = f"its journal {Path(str(exc.filename)).name} is missing"
    raise StateError(f"{path}: unreadable run state ({missing}); delete the folder to restart")


def _read_state(path: Path) -> RunState | None:
    if not path.exists():
        return None
    try:
        state = RunState.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        why = f"{where}: {first['msg']}"
    except FileNotFoundError:
        raise
    except (ValueError, OSError) as exc:
        why = _first_line(exc)
    else:
        if not state.journal:
            return state
        journal = journal_path(path.parent, state.journal)
        try:
            with open(journal, "rb") as handle:
                data = handle.read(state.journal_bytes)
            if len(data) < state.journal_bytes:
                raise ValueError(f"shorter than the {state.journal_bytes} bytes the checkpoint names")
            replay_journal(state, data)
            return state
        except FileNotFoundError:
            raise
        except (ValueError, KeyError, TypeError, OSError) as exc:
            why = f"{journal.name}: {_first_line(exc)}"
    raise StateError(f"{path}: unreadable run state ({why}); delete the folder to restart")


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def replay_journal(state: RunState, data: bytes) -> None:
    """Fill the journaled fields of ``state`` from a journal's records (one JSON object per line):
    ``{"m": message}`` appends to the persona's context, ``{"reset": true}`` empties it (a compaction: the new
    context follows), ``{"sheet": name, "value": sheet}`` is a live sheet, ``{"told": sheet, "ids": [...]}``
    its told marks, ``{"changed_at": {"sheet id": n}}`` change stamps, ``{"grade": check id, "at": messages
    sent, "evaluation": event, "judge": event}`` a check's latest grade and the judge's grade of it (either
    absent: none), ``{"observation": event}`` an agent compaction, ``{"sent": [n, phase, keys]}`` a message the
    agent received."""
    messages: list[Message] = []
    state.sheets, state.told, state.changed_at = {}, {}, {}
    for line in data.splitlines():
        record = json.loads(line)
        if "m" in record:
            messages.append(record["m"])
        elif "reset" in record:
            messages = []
        elif "sheet" in record:
            state.sheets[record["sheet"]] = Sheet.model_validate(record["value"])
        elif "told" in record:
            state.told[record["told"]] = list(record["ids"])
        elif "changed_at" in record:
            state.changed_at.update(record["changed_at"])
        elif "grade" in record:  # the latest record of a check wins
            check_id, evaluation, at = record["grade"], record.get("evaluation"), record.get("at")
            if evaluation is None:
                state.evaluations.pop(check_id, None)
            else:
                state.evaluations[check_id] = EvaluationLogged.model_validate(evaluation)
            if at is None:
                state.graded_at.pop(check_id, None)
            else:
                state.graded_at[check_id] = at
            judged = record.get("judge")
            if judged is None:
                state.judge_grades.pop(check_id, None)
            else:
                state.judge_grades[check_id] = JudgeGraded.model_validate(judged)
        elif "observation" in record:
            state.agent_observations.append(AgentCompacted.model_validate(record["observation"]))
        elif "sent" in record:
            n, phase, keys = record["sent"]
            state.sent_log.append(SentMessage(n=n, phase=phase, keys=keys))
        else:
            raise ValueError(f"unknown record {line[:60]!r}")
    state.persona_messages = messages

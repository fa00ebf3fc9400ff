"""What a save writes: the journal of what grows with a run (appended, never rewritten), then ``state.json``.

The persona's context, the live sheets, the told marks and when each fact changed, each check's latest grade
(with when it was graded and the judge's grade of it, on one line: both or neither), and the series that only
grow (``_SERIES``: the agent's compactions, the messages it received, its context sizes, the run's report
entries; ``JOURNALED`` in ``engine/state.py``) go to ``journal.<n>.jsonl``: a save appends only what
changed since the last one, and ``state.json`` (cursors, clock, phase: bounded) names the journal's length it
covers, so the cost of a save does not grow with the run. A resume reads the journal up to that length:
bytes written after the checkpoint (where a kill landed) are ignored and replayed, as before.

Each session starts a new generation holding what is live (a resumed context may also have been changed in
place), and so does a journal grown well past what is live (old contexts, regraded checks): a reader never
reads much more than twice what it keeps. The writer (``StateWriter``, off the event loop, latest wins) syncs
the journal before ``state.json`` names it and removes older generations once a checkpoint naming a newer one
is on disk.

Changes are found without hooks in the code that makes them, each at the cost of what changed: the context
by identity (messages appended, or a new list after a compaction; a message is never edited in place),
told marks and change stamps by one C-level comparison with a copy, and what only the run's events change
by those events: a grade (``evaluation_logged``, ``judge_graded``), a sheet edit (the persona's
``facts_edit``/``facts_add``, the operator's ``edit_fact``/``add_fact``, and a new change stamp), the series
(appended: by identity and length).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import TypeAdapter

from engine import state as state_file  # its ``atomic_write`` looked up at each write (tests replace it)
from engine.events import AgentCompacted, EvaluationLogged, Event, JudgeGraded, OperatorActed, ToolCalled
from engine.models.base import Message
from engine.state import RunState, SentMessage, StateSaveError, checkpoint_json, journal_path

_JSON = TypeAdapter(Any)
_SLACK = 256 * 1024  # a journal is rewritten once it holds this much more than twice what is live
_SHEET_TOOLS = frozenset({"facts_edit", "facts_add"})
_SHEET_ACTIONS = frozenset({"edit_fact", "add_fact"})
LOCAL_TOOLS = frozenset(
    {"facts_read", "facts_mark_told", "facts_get_untold", "facts_edit", "facts_add", "log_evaluation"}
)
"""Tools that only touch the run's own state: replayed identically from the last checkpoint after a kill,
so they need no save of their own (``Run._execute_tool_calls`` saves before any other, and at the end)."""


def _line(record: dict[str, Any], **raw: bytes) -> bytes:
    """One journal line: ``record`` and, spliced in, values already serialised (a sheet, an event)."""
    head = _JSON.dump_json(record)
    spliced = b"".join(b',"%s":%s' % (key.encode(), value) for key, value in raw.items())
    return (head[:-1] + spliced + b"}\n") if record else (b"{" + spliced[1:] + b"}\n")


def _sent_line(sent: SentMessage) -> bytes:
    return _line({"sent": [sent.n, sent.phase, sent.keys]})


def _observation_line(observation: AgentCompacted) -> bytes:
    return _line({}, observation=observation.model_dump_json().encode())


def _context_line(reading: state_file.ContextReading) -> bytes:
    return _line({"context": [reading.n, reading.phase, reading.tokens]})


def _entry_line(entry_id: str) -> bytes:
    return _line({"entry": entry_id})


_SERIES: dict[str, Callable[[Any], bytes]] = {
    "agent_observations": _observation_line,
    "sent_log": _sent_line,
    "agent_context": _context_line,
    "report_entries": _entry_line,
}
"""The state's lists that only grow, one line per item: a save appends the items past the count journaled
(the same list, never shorter; anything else starts a new generation)."""


class Journal:
    """Appends a run's growing state to its journal (the run's own; one writer: the lock holder)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.generation = 0  # of the file being appended to; 0 until the session's first save
        self._handle: BinaryIO | None = None
        self._size = 0
        self._valid = False  # the copies below match the file (else the next save starts a new generation)
        self._messages: list[Message] = []  # the context journaled (the same objects), and its lines
        self._message_lines: list[bytes] = []
        self._sheets: dict[str, bytes] = {}  # each sheet as journaled (its JSON)
        self._told: dict[str, list[str]] = {}
        self._changed_at: dict[str, int] = {}
        self._changed_from: dict[str, str] = {}
        self._evaluations: dict[str, EvaluationLogged] | None = None
        self._graded_at: dict[str, int] | None = None
        self._judge_grades: dict[str, JudgeGraded] | None = None
        self._grade_lines: dict[str, bytes] = {}
        self._evaluated: set[str] = set()  # the checks whose journaled grade has an evaluation, a stamp
        self._graded: set[str] = set()
        self._judged: set[str] = set()
        self._live = 0  # about the bytes a new generation would hold (the rest a reader reads is waste)
        self._series: dict[str, tuple[list[Any] | None, int]] = {}  # each series journaled, and its length
        self._dirty_checks: set[str] = set()
        self._dirty_sheets = False
        self._obsolete: list[tuple[int, Path]] = []  # older generations, removed once a newer one is named
        self._lock = threading.Lock()
        self._synced = (0, 0)  # the generation and length last synced (by the writer's thread)

    @property
    def path(self) -> Path:
        return journal_path(self.run_dir, self.generation)

    def note(self, event: Event) -> None:
        """An emitted event: a grade marks its check, a sheet edit the sheets, for the next save."""
        if isinstance(event, EvaluationLogged | JudgeGraded):
            self._dirty_checks.add(event.check_id)
        elif (isinstance(event, ToolCalled) and event.name in _SHEET_TOOLS) or (
            isinstance(event, OperatorActed) and event.action in _SHEET_ACTIONS
        ):
            self._dirty_sheets = True

    def record(self, state: RunState) -> None:
        """Append what changed since the last save (or start a new generation) and stamp ``state`` with the
        generation and length that hold it. An ``OSError`` leaves the next save to start a new generation."""
        try:
            lines = self._changes(state) if self._valid else None
            if lines is None:
                self._start_generation(state, self._snapshot(state))
            elif self._size + sum(map(len, lines)) > 2 * self._live + _SLACK:
                self._start_generation(state, self._live_lines(state))
            elif lines:
                self._append(b"".join(lines))
        except OSError:
            self._valid = False
            raise
        state.journal, state.journal_bytes = self.generation, self._size

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    # ---- the writer's side (a worker thread) ------------------------------------------------------

    def sync(self, generation: int, length: int) -> None:
        if self._synced[0] == generation and self._synced[1] >= length:
            return
        path = journal_path(self.run_dir, generation)
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fdatasync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StateSaveError(f"{path}: {exc.strerror or exc}") from None
        self._synced = (generation, length)

    def prune(self, generation: int) -> None:
        with self._lock:
            done = [(g, p) for g, p in self._obsolete if g < generation]
            self._obsolete = [(g, p) for g, p in self._obsolete if g >= generation]
        for _, path in done:
            path.unlink(missing_ok=True)

    # ---- what changed ------------------------------------------------------------------------------

    def _changes(self, state: RunState) -> list[bytes] | None:
        """The lines to append, or None when a new generation is simpler (something removed or replaced)."""
        if (
            state.evaluations is not self._evaluations
            or state.graded_at is not self._graded_at
            or state.judge_grades is not self._judge_grades
            or state.sheets.keys() != self._sheets.keys()
            or any(
                getattr(state, name) is not kept or len(getattr(state, name)) < count
                for name, (kept, count) in self._series.items()
            )
        ):
            return None
        lines = self._context_changes(state.persona_messages)
        if state.changed_at != self._changed_at:
            if not state.changed_at.keys() >= self._changed_at.keys():
                return None
            changed = {k: v for k, v in state.changed_at.items() if self._changed_at.get(k) != v}
            self._changed_at.update(changed)
            lines.append(_line({"changed_at": changed}))
            self._dirty_sheets = True  # a fact edited or added (its event says so too)
        if state.changed_from != self._changed_from:  # set with a stamp, never removed: texts before it
            was = {k: v for k, v in state.changed_from.items() if self._changed_from.get(k) != v}
            self._changed_from.update(was)
            lines.append(_line({"changed_from": was}))
        if self._dirty_sheets:
            self._dirty_sheets = False
            for name, sheet in state.sheets.items():
                data = sheet.model_dump_json().encode()
                if data != self._sheets[name]:
                    self._live += len(data) - len(self._sheets[name])
                    self._sheets[name] = data
                    lines.append(_line({"sheet": name}, value=data))
        if state.told != self._told:  # one C-level comparison
            if not state.told.keys() >= self._told.keys():
                return None
            for name, ids in state.told.items():
                if self._told.get(name) != ids:
                    self._told[name] = list(ids)
                    lines.append(_line({"told": name, "ids": ids}))
        for check_id in sorted(self._dirty_checks):
            line = self._grade_line(state, check_id)
            self._live += len(line) - len(self._grade_lines.get(check_id, b""))
            self._grade_lines[check_id] = line
            for journaled, present in (
                (self._evaluated, state.evaluations),
                (self._graded, state.graded_at),
                (self._judged, state.judge_grades),
            ):
                if check_id in present:
                    journaled.add(check_id)
                else:
                    journaled.discard(check_id)
            lines.append(line)
        self._dirty_checks.clear()
        counts = (len(self._evaluated), len(self._graded), len(self._judged))
        if (len(state.evaluations), len(state.graded_at), len(state.judge_grades)) != counts:
            return None  # changed without their event
        for name, encode in _SERIES.items():
            items = getattr(state, name)
            new = [encode(item) for item in items[self._series[name][1] :]]
            self._live += sum(map(len, new))
            lines += new
            self._series[name] = (items, len(items))
        return lines

    def _context_changes(self, messages: list[Message]) -> list[bytes]:
        journaled = self._messages
        if len(messages) >= len(journaled) and messages[: len(journaled)] == journaled:  # one C-level pass
            new = messages[len(journaled) :]
            lines = [_line({"m": m}) for m in new]
            journaled += new
            self._message_lines += lines
            self._live += sum(map(len, lines))
            return lines
        # a new context (a compaction): say so, then every message (lines of the ones kept are reused)
        known = {id(m): line for m, line in zip(journaled, self._message_lines, strict=True)}
        self._live -= sum(map(len, self._message_lines))
        self._messages = list(messages)
        self._message_lines = [known.get(id(m)) or _line({"m": m}) for m in messages]
        self._live += sum(map(len, self._message_lines))
        return [_line({"reset": True}), *self._message_lines]

    @staticmethod
    def _grade_line(state: RunState, check_id: str) -> bytes:
        evaluation, judged = state.evaluations.get(check_id), state.judge_grades.get(check_id)
        raw = {"evaluation": evaluation.model_dump_json().encode()} if evaluation is not None else {}
        if judged is not None:
            raw["judge"] = judged.model_dump_json().encode()
        return _line({"grade": check_id, "at": state.graded_at.get(check_id)}, **raw)

    # ---- generations ---------------------------------------------------------------------------------

    def _snapshot(self, state: RunState) -> list[bytes]:
        """Copies of everything journaled, from ``state``, and the lines of a generation holding it."""
        self._messages = list(state.persona_messages)
        self._message_lines = [_line({"m": m}) for m in state.persona_messages]
        self._sheets = {name: sheet.model_dump_json().encode() for name, sheet in state.sheets.items()}
        self._told = {name: list(ids) for name, ids in state.told.items()}
        self._changed_at = dict(state.changed_at)
        self._changed_from = dict(state.changed_from)
        self._evaluations, self._graded_at = state.evaluations, state.graded_at
        self._judge_grades = state.judge_grades
        checks = {**state.evaluations, **state.graded_at, **state.judge_grades}
        self._grade_lines = {c: self._grade_line(state, c) for c in checks}
        self._evaluated, self._graded = set(state.evaluations), set(state.graded_at)
        self._judged = set(state.judge_grades)
        self._series = {name: (getattr(state, name), len(getattr(state, name))) for name in _SERIES}
        self._dirty_checks.clear()
        self._dirty_sheets = False
        return self._live_lines(state)

    def _live_lines(self, state: RunState) -> list[bytes]:
        """The lines of a new generation holding what is journaled (and ``_live`` counted again)."""
        lines = [
            *self._message_lines,
            *(_line({"sheet": name}, value=data) for name, data in self._sheets.items()),
            *(_line({"told": name, "ids": ids}) for name, ids in self._told.items()),
            _line({"changed_at": self._changed_at}),
            _line({"changed_from": self._changed_from}),
            *self._grade_lines.values(),
            *(
                encode(item)
                for name, encode in _SERIES.items()
                for item in getattr(state, name)[: self._series[name][1]]
            ),
        ]
        self._live = sum(map(len, lines))
        return lines

    def _start_generation(self, state: RunState, lines: list[bytes]) -> None:
        """A new file holding ``lines``; the previous one stays until a checkpoint names the new one."""
        if (
            self.generation == 0
        ):  # journals no checkpoint on disk names: left by a kill before their checkpoint
            self._remove_unnamed(keep=state.journal)
        previous = self.generation or state.journal
        self.close()
        self.generation = max(self.generation, state.journal) + 1
        self._handle = open(self.path, "wb")  # noqa: SIM115 - appended to until the next generation
        self._size = 0
        self._valid = False
        self._append(b"".join(lines))
        self._valid = True
        if previous:
            with self._lock:
                self._obsolete.append((previous, journal_path(self.run_dir, previous)))

    def _append(self, data: bytes) -> None:
        assert self._handle is not None
        self._handle.write(data)
        self._handle.flush()  # survives kill -9 (the OS has it); the writer syncs it before naming it
        self._size += len(data)

    def _remove_unnamed(self, keep: int) -> None:
        for path in self.run_dir.glob("journal.*.jsonl"):
            generation = path.name.split(".")[1]
            if not generation.isdigit() or int(generation) != keep:
                path.unlink(missing_ok=True)


class StateWriter:
    """Writes snapshots of a run's state off the event loop, latest wins.

    The snapshot is serialised at once (so it is exactly the state of that moment); the fsync'ed
    atomic write runs in a worker thread, after the journal it names is synced. A snapshot taken while a
    write is in flight replaces any older one still waiting. Whatever is on disk is always one complete
    checkpoint: a kill resumes from it and replays the rest, as if it had come a moment earlier.
    """

    def __init__(self, path: Path, journal: Journal | None = None) -> None:
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
            state_file.atomic_write(self.path, data)
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

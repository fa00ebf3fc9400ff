"""``results/<run-id>/state.json``: the resumable state of a run, and reading it back, refused when damaged.

It stays bounded as a run grows: the full history lives in ``transcript.jsonl``. ``state.json`` holds the
cursors, the clock and the current phase; what grows with a run (``JOURNALED``) lives in the append-only
``journal.<n>.jsonl`` that the checkpoint names with the length it covers (``engine/run/checkpoint.py`` writes
both). A state written before the journal holds them itself.

``load_state`` never takes a default for a damaged file: it raises ``StateError`` (``unreadable``) unless
``state.json`` is one JSON object holding every key its version writes (``VERSION_KEYS``: version 1 states,
written before, may lack the fields added since and get their defaults), no key no version wrote (at any
depth), no key twice, each value of its exact type (``"yes"`` is no boolean) and range, and its journal, up to
the length named, lines that are each one known record exactly. Whether the state agrees with itself, its
benchmark and its transcript is checked when a run resumes (``engine/run/resume_check.py``).
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import date
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import from_json

from engine.benchmark.model import Sheet
from engine.config import stray_key
from engine.events import AgentCompacted, EvaluationLogged, JudgeGraded, RunStatus
from engine.models.base import Message
from engine.persona_record import PersonaRecord

STATE_VERSION = 5  # a field added to RunState is a new version, its keys listed in VERSION_KEYS
JOURNALED = frozenset(
    "persona_messages sheets told changed_at changed_from evaluations graded_at judge_grades agent_observations "
    "sent_log agent_context report_entries".split()
)
"""Fields kept in the journal, not in ``state.json`` (once the state has a journal)."""
FIRST_KEYS = frozenset(
    "version run_id benchmark agent start_date clock_offset clock_now clock_jumps status reason finished "
    "phase_index phases_started phase_vars phase_text persona_messages phase_starts persona_turns_in_phase "
    "sheets loaded_sheets told evaluations agent_observations agent_seq adapter_state usage run_seconds "
    "transcript_bytes transcript_events reported".split()
)
VERSION_KEYS = {  # the keys each version writes (those of JOURNALED in the journal once there is one)
    1: FIRST_KEYS,  # the first release's: every version 1 state holds them, the later ones may be absent
    2: FIRST_KEYS
    | frozenset(
        "messages_sent phase_first_message changed_at last_replies sent_since_grade graded_at sent_log "
        "sent_log_from judge_grades persona_compactions persona_record pending_report journal journal_bytes "
        # journaled series added since: no version of their own, as a journal without them holds none yet
        "agent_context report_entries".split()
    ),
}
# version 3 writes version 2's keys; ``persona_record.second_attempts`` came (an older record lacks it: counted
# from the grades when read, ``PersonaRecord.count_second_attempts``)
VERSION_KEYS[3] = VERSION_KEYS[2]
VERSION_KEYS[4] = VERSION_KEYS[3] | {"changed_from"}  # a fact's text before its last change (premises)
VERSION_KEYS[5] = VERSION_KEYS[4] | {"transcript_sha256"}  # the checkpointed transcript's digest
RETIRED = frozenset({"inflight_message"})  # keys a version 1 state may hold that nothing reads (dropped)
WAY_OUT = "restore the file from a copy, or delete the run's folder to start over (nothing was changed)"


def _upgrade_records(data: Any) -> bool:
    """A parsed state written before evaluations were stored as their events, or holding a retired key, made
    current in place; whether anything changed."""
    changed = False
    if isinstance(data, dict):
        if data.get("version") == 1 and RETIRED & data.keys():
            for key in RETIRED:
                data.pop(key, None)
            changed = True
        for record in (data.get("evaluations") or {}).values():
            if isinstance(record, dict) and "transcript_n" in record:
                record.setdefault("n", record.pop("transcript_n"))
                changed = True
    return changed


class SentMessage(BaseModel):
    """A message the agent received, as a premise reads it (``engine/grading/premises.py``)."""

    n: int  # its transcript number (the ``message_sent`` event)
    phase: int  # the phase it was sent in (0-based)
    keys: str  # what it says, as space-separated keys (``engine/grading/told_values.py``)


class ContextReading(NamedTuple):
    """A size of the agent's context its adapter reported, kept when it changed (``AgentChannel.record``)."""

    n: int  # the transcript's length when it was read (it came after event n - 1)
    phase: int  # the phase it was read in (0-based)
    tokens: int


class RunState(BaseModel):
    """A run's state; ``state.json`` is its JSON (without ``JOURNALED`` once it has a journal)."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(default=STATE_VERSION, ge=1, le=STATE_VERSION)
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
    phase_first_message: int = Field(default=0, ge=0)  # messages_sent when the current phase began
    changed_at: dict[str, int] = Field(default_factory=dict)  # "sheet id" -> messages_sent when last changed
    # "sheet id" -> its text before its last change, as the agent could know it ("" for an added fact): what
    # the change brought in is what must be told (engine/grading/premises.py); absent in older states
    changed_from: dict[str, str] = Field(default_factory=dict)
    # the agent's replies to the latest message, and the persona's messages since the last grade (bounded)
    last_replies: list[str] = Field(default_factory=list)
    sent_since_grade: list[str] = Field(default_factory=list)
    graded_at: dict[str, int] = Field(default_factory=dict)  # check id -> messages_sent at its last grade
    sent_log: list[SentMessage] = Field(default_factory=list)  # every message the agent received, as keys
    # messages_sent when the sent log began: 0 for a run logged from its start (a run begun before the log
    # existed starts it later); the log holds messages_sent - sent_log_from messages
    sent_log_from: int = Field(default=0, ge=0)
    judge_grades: dict[str, JudgeGraded] = Field(default_factory=dict)  # the judge's latest grade per check
    persona_compactions: int = Field(default=0, ge=0)
    agent_observations: list[AgentCompacted] = Field(default_factory=list)
    agent_context: list[ContextReading] = Field(default_factory=list)  # the report's "before the exam", peak
    persona_record: PersonaRecord | None = None  # slips and new sessions, counted as recorded (None: not yet)
    agent_seq: int = Field(default=0, ge=0)
    adapter_state: dict[str, Any] = Field(default_factory=dict)

    usage: dict[str, Any] = Field(default_factory=dict)
    run_seconds: float = Field(default=0.0, ge=0)  # real time spent running, over all sessions
    # the transcript's committed length and its number of events (later bytes are rolled back on resume)
    transcript_bytes: int = Field(default=0, ge=0)
    transcript_events: int = Field(default=0, ge=0)
    transcript_sha256: str = Field(default="", pattern=r"^(|[0-9a-f]{64})$")  # of its first transcript_bytes
    reported: bool = False
    pending_report: str = ""  # an entry saved with this checkpoint, appended to report.md right after
    report_entries: list[str] = Field(default_factory=list)  # the ids of its entries: a newer one supersedes
    journal: int = Field(default=0, ge=0)  # generation of the journal holding JOURNALED (0: none, all here)
    journal_bytes: int = Field(default=0, ge=0)  # the journal's length this checkpoint covers


class StateError(Exception):
    """A run state that cannot be used: one line naming ``state.json``, the file at fault and what is wrong."""


class StateSaveError(StateError):
    """A checkpoint could not be written: the message names the file and the reason."""


def unreadable(path: Path, file: str, what: str, way_out: str = WAY_OUT) -> StateError:
    """The one-line refusal of the run state at ``path``: ``file`` (a name in its folder) and what is wrong."""
    return StateError(f"{path}: unreadable run state ({file}: {what}); {way_out}")


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


def load_state(path: Path) -> RunState | None:
    """The checkpoint at ``path`` with its journal read up to the length it names, every key and value checked
    (module docstring); None if there is none; ``StateError`` naming the file and what is wrong."""
    missing = ""
    for _ in range(5):  # a reader may meet a journal that a newer checkpoint has just replaced: read again
        try:
            return _read_state(path)
        except FileNotFoundError as exc:
            missing = Path(str(exc.filename)).name
    raise unreadable(path, missing, f"missing, and {path.name} names it as its journal")


def _read_state(path: Path) -> RunState | None:
    if not path.exists():
        return None
    state: RunState | None = None
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text, object_pairs_hook=_pairs)
        if _upgrade_records(raw):
            text = json.dumps(raw)
        problem = key_problem(raw)
        if not problem:  # strictly, from JSON: a date from its ISO text, never a boolean from "yes"
            state = RunState.model_validate_json(text, strict=True)
    except ValidationError as exc:
        problem = _first_error(exc)
    except FileNotFoundError:
        raise
    except (ValueError, OSError) as exc:
        problem = _first_line(exc)
    if state is None:
        raise unreadable(path, path.name, problem)
    if state.journal:
        journal = journal_path(path.parent, state.journal)
        try:
            with open(journal, "rb") as handle:
                data = handle.read(state.journal_bytes)
            if len(data) < state.journal_bytes:
                raise ValueError(f"shorter than the {state.journal_bytes} bytes the checkpoint names")
            replay_journal(state, data)
        except FileNotFoundError:
            raise
        except (ValueError, OSError) as exc:
            raise unreadable(path, journal.name, _first_line(exc)) from None
    if "sent_log_from" not in raw:  # version 1: the log began when this code first saved the run
        state.sent_log_from = max(0, state.messages_sent - len(state.sent_log))
    if state.persona_record and "second_attempts" not in raw["persona_record"]:  # versions 1 and 2
        state.persona_record.count_second_attempts(state.evaluations.values())
    state.version = STATE_VERSION  # read whole: saved again, it holds every key
    return state


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key written twice (a damaged file; ``json`` would keep the last)."""
    found = dict(pairs)
    if len(found) < len(pairs):
        twice = next(key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i]))
        raise ValueError(f"key {twice!r} twice")
    return found


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"{where}: {first['msg']}"


def key_problem(raw: Any) -> str:
    """What is wrong with the keys of a parsed ``state.json``: missing for its version, unknown (at any depth),
    journaled ones kept beside a journal; "" when nothing."""
    if not isinstance(raw, dict):
        return "not a JSON object"
    version = raw.get("version")
    if type(version) is not int or not 1 <= version <= STATE_VERSION:
        return f"version {version!r}: this code reads versions 1 to {STATE_VERSION} (a newer one wrote it?)"
    journaled = type(raw.get("journal")) is int and raw["journal"] > 0
    fields = set(RunState.model_fields)
    required = VERSION_KEYS[version] - (JOURNALED if journaled else set())
    problems = []
    if missing := sorted(required - raw.keys()):
        problems.append("missing " + ", ".join(missing))
    if unknown := sorted(raw.keys() - fields):
        problems.append("unknown key" + "s" * (len(unknown) > 1) + " " + ", ".join(map(repr, unknown)))
    if beside := sorted(JOURNALED & raw.keys()) if journaled else []:
        problems.append(f"{', '.join(beside)} beside a journal (they belong in it)")
    return " and ".join(problems) or stray_key(RunState, raw)


class _Record(BaseModel):
    """One journal line (``replay_journal``), read strictly: its keys are those of one kind in ``_KINDS``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    m: Message | None = None
    reset: Literal[True] | None = None
    sheet: str | None = None
    value: Sheet | None = None
    told: str | None = None
    ids: list[str] | None = None
    changed_at: dict[str, int] | None = None
    changed_from: dict[str, str] | None = None
    grade: str | None = None
    at: int | None = None  # null: the check has no grade stamp
    evaluation: EvaluationLogged | None = None
    judge: JudgeGraded | None = None
    observation: AgentCompacted | None = None
    sent: tuple[int, int, str] | None = None
    context: ContextReading | None = None
    entry: str | None = None


_KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {  # a record's kind: the keys it has, may have
    kind: (frozenset(keys.split()), frozenset(f"{keys} {optional}".split()))
    for kind, keys, optional in [
        *(("m", "m", ""), ("reset", "reset", ""), ("sheet", "sheet value", ""), ("told", "told ids", "")),
        *(("changed_at", "changed_at", ""), ("changed_from", "changed_from", "")),
        ("grade", "grade at", "evaluation judge"),
        *(("observation", "observation", ""), ("sent", "sent", ""), ("context", "context", "")),
        ("entry", "entry", ""),
    ]
}


def replay_journal(state: RunState, data: bytes) -> None:
    """Fill the journaled fields of ``state`` from a journal's records (one JSON object per line):
    ``{"m": message}`` appends to the persona's context, ``{"reset": true}`` empties it (a compaction: the new
    context follows), ``{"sheet": name, "value": sheet}`` is a live sheet, ``{"told": sheet, "ids": [...]}``
    its told marks, ``{"changed_at": {"sheet id": n}}`` change stamps, ``{"changed_from": {"sheet id": text}}``
    the texts facts had before their last change, ``{"grade": check id, "at": messages
    sent, "evaluation": event, "judge": event}`` a check's latest grade and the judge's grade of it (either
    absent: none), ``{"observation": event}`` an agent compaction, ``{"sent": [n, phase, keys]}`` a message the
    agent received, ``{"context": [n, phase, tokens]}`` its context's size, ``{"entry": id}`` a report entry of
    the run. A line that is not one of these exactly is a ``ValueError`` naming its number."""
    messages: list[Message] = []
    state.sheets, state.told, state.changed_at, state.changed_from = {}, {}, {}, {}
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            r = _record(line)
        except ValidationError as exc:
            raise ValueError(f"line {number}: {_first_error(exc)}") from None
        except ValueError as exc:
            raise ValueError(f"line {number}: {_first_line(exc)}") from None
        if r.m is not None:
            messages.append(r.m)
        elif r.reset:
            messages = []
        elif r.sheet is not None and r.value is not None:
            state.sheets[r.sheet] = r.value
        elif r.told is not None and r.ids is not None:
            state.told[r.told] = r.ids
        elif r.changed_at is not None:
            state.changed_at.update(r.changed_at)
        elif r.changed_from is not None:
            state.changed_from.update(r.changed_from)
        elif r.grade is not None:  # the latest record of a check wins
            _keep(state.evaluations, r.grade, r.evaluation)
            _keep(state.graded_at, r.grade, r.at)
            _keep(state.judge_grades, r.grade, r.judge)
        elif r.observation is not None:
            state.agent_observations.append(r.observation)
        elif r.sent is not None:
            n, phase, keys = r.sent
            state.sent_log.append(SentMessage(n=n, phase=phase, keys=keys))
        elif r.context is not None:
            state.agent_context.append(r.context)
        elif r.entry is not None:
            state.report_entries.append(r.entry)
    state.persona_messages = messages


def _record(line: bytes) -> _Record:
    """One journal line read strictly: a known kind with its keys (none null but a grade's ``at``)."""
    raw = from_json(line)
    kind = next((k for k in _KINDS if k in raw), "") if isinstance(raw, dict) else ""
    if not kind:
        raise ValueError(f"unknown record {line[:60]!r}")
    required, allowed = _KINDS[kind]
    if not required <= raw.keys() <= allowed or any(raw[key] is None for key in required if key != "at"):
        raise ValueError(f"a {kind!r} record with the keys {', '.join(sorted(raw))}, or a null")
    if stray := stray_key(_Record, raw):
        raise ValueError(stray)
    return _Record.model_validate_json(line, strict=True)


def _keep(kept: dict[str, Any], key: str, value: Any) -> None:
    """``kept[key] = value``, or no ``key`` when ``value`` is None."""
    if value is None:
        kept.pop(key, None)
    else:
        kept[key] = value

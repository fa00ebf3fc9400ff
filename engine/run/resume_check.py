"""Whether a saved run can be resumed: its state agrees with itself, with its benchmark and with its transcript.

``engine/state.py`` ``load_state`` reads each file strictly (every key its version writes and no other, exact
types and ranges, journal records exactly). ``check_resume`` then checks, before a resumed run changes
anything, what only the whole tells: ``bounded_problem`` (``state.json``'s own fields: the phase among those
started, cursors within the transcript and the messages sent) and ``journaled_problem`` (what the journal
holds: cursors again, the sent log as long as the messages sent since it began, told marks and change stamps
naming facts of the live sheets, each grade kept under its check); that the benchmark is the one played and
still holds the phases started; and that the transcript holds what the checkpoint covers: at least
``transcript_bytes`` long, its last checkpointed event whole and numbered ``transcript_events - 1``
(``engine/transcript.py`` ``checkpointed_problem``; the bytes after it are cut by the resume, as the journal's
are ignored), and those bytes as written: their SHA-256 is the checkpoint's (``digest_problem``). Anything off is a ``StateError``: ``<state.json>: unreadable run state (<file>: <what>); <the
way out>``; nothing was changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

from engine.benchmark.model import Benchmark
from engine.state import RunState, journal_path, unreadable
from engine.transcript import checkpointed_problem, digest_problem

CHAPTER_WAY_OUT = "restore it, or delete the run's folder to start over (nothing was changed)"
BENCHMARK_WAY_OUT = (
    "name that benchmark again in config.jsonc, or delete the run's folder to start over "
    "(nothing was changed)"
)


def check_resume(state: RunState, bench: Benchmark, run_dir: Path) -> None:
    """``StateError`` when ``state`` (read from ``run_dir``) cannot be resumed with ``bench`` (module doc)."""
    path = run_dir / "state.json"
    if problem := bounded_problem(state):
        raise unreadable(path, path.name, problem)
    if problem := journaled_problem(state):
        files = f"{path.name} + {journal_path(run_dir, state.journal).name}" if state.journal else path.name
        raise unreadable(path, files, problem)
    if state.benchmark != bench.name:
        what = f"the run played benchmark {state.benchmark!r}, and config.jsonc names {bench.name!r}"
        raise unreadable(path, path.name, what, BENCHMARK_WAY_OUT)
    phases = len(bench.phases)
    if state.phases_started > phases:  # the current phase is one of those started (``bounded_problem``)
        what = f"phases_started {state.phases_started} is beyond the benchmark's {phases} phases"
        raise unreadable(path, path.name, f"{what}: was a chapter removed?", CHAPTER_WAY_OUT)
    transcript = run_dir / "transcript.jsonl"
    if problem := checkpointed_problem(transcript, state.transcript_bytes, state.transcript_events):
        raise unreadable(path, transcript.name, problem)
    if problem := digest_problem(transcript, state.transcript_bytes, state.transcript_sha256):
        raise unreadable(path, transcript.name, problem)


def bounded_problem(state: RunState) -> str:
    """What in ``state.json``'s own fields contradicts the rest of them; "" when nothing."""
    events, sent, started = state.transcript_events, state.messages_sent, state.phases_started
    if state.phase_index >= max(started, 1):
        return f"phase_index {state.phase_index} is not one of the {started} phases started"
    if state.finished and not started:
        return "finished, with no phase started"
    if (state.transcript_bytes == 0) != (events == 0) or state.transcript_bytes < events:
        return f"transcript_bytes {state.transcript_bytes} cannot hold transcript_events {events}"
    if (state.journal == 0) != (state.journal_bytes == 0):
        return f"journal {state.journal} with journal_bytes {state.journal_bytes}"
    try:
        datetime.fromisoformat(state.clock_now or "2000-01-01")
    except ValueError:
        return f"clock_now {state.clock_now!r} is not a time"
    for where, at in (
        ("phase_first_message", state.phase_first_message),
        ("sent_log_from", state.sent_log_from),
    ):
        if at > sent:
            return f"{where} {at} is beyond the {sent} messages sent"
    if state.persona_record is not None:
        sessions = state.persona_record.sessions
        numbers = [("persona_record.since", state.persona_record.since)]
        numbers += [(f"persona_record.sessions[{i}]", s.n) for i, s in enumerate(sessions)]
        return _beyond(numbers, events)
    return ""


def journaled_problem(state: RunState) -> str:
    """What in the fields read from the journal (or ``state.json`` before the journal) contradicts the rest of
    the state; "" when nothing."""
    count = len(state.persona_messages)
    if any(not 0 <= start <= count for start in state.phase_starts):
        return f"phase_starts {state.phase_starts} beyond the persona's {count} messages"
    stamps = [*state.changed_at.items(), *state.graded_at.items()]
    if wrong := [key for key, at in stamps if not 0 <= at <= state.messages_sent]:
        return f"{', '.join(wrong)} changed or graded at a message not among the {state.messages_sent} sent"
    return (
        _beyond(_numbers(state), state.transcript_events) or _sent_log_problem(state) or _sheet_problem(state)
    )


def _beyond(numbers: Iterable[tuple[str, int]], events: int) -> str:
    """The first of ``numbers`` (transcript numbers, each of an event before the checkpoint) not among ``events``."""
    for where, n in numbers:
        if not 0 <= n < events:
            return f"{where} names event #{n}, beyond the transcript's {events} events"
    return ""


def _sent_log_problem(state: RunState) -> str:
    """The log of messages the agent received: in transcript order, each in a phase started, one a message."""
    log, started = state.sent_log, max(state.phases_started, 1)
    if any(a.n >= b.n for a, b in zip(log, log[1:], strict=False)):
        return "sent_log is not in transcript order"
    if any(m.phase >= started for m in log):
        return f"sent_log holds a message sent in a phase beyond the {state.phases_started} started"
    if len(log) != state.messages_sent - state.sent_log_from:
        return (
            f"sent_log holds {len(log)} messages, but messages_sent is {state.messages_sent} "
            f"({state.sent_log_from} of them before the log began)"
        )
    return ""


def _sheet_problem(state: RunState) -> str:
    """Loaded sheets, told marks and change stamps name live sheets and their facts; grades their checks."""
    for name in [*state.loaded_sheets, *state.told]:
        if name not in state.sheets:
            return f"sheet {name!r} is loaded or told, and no live sheet has that name"
    for name, ids in state.told.items():
        if missing := [i for i in ids if state.sheets[name].find(i) is None]:
            return f"told marks {name} {', '.join(missing)}: no such fact in the live sheet"
    for key in state.changed_at:
        name, _, fact_id = key.rpartition(" ")
        if name not in state.sheets or state.sheets[name].find(fact_id) is None:
            return f"changed_at names {key!r}: no such fact in the live sheets"
    kept = [(c, e.check_id) for c, e in state.evaluations.items()]
    kept += [(c, j.check_id) for c, j in state.judge_grades.items()]
    for check_id, graded in kept:
        if graded != check_id:
            return f"the grade kept as check {check_id!r} is a grade of {graded!r}"
    return ""


def _numbers(state: RunState) -> Iterator[tuple[str, int]]:
    """Every transcript number the journaled fields hold (each of an event recorded before the checkpoint)."""
    yield from ((f"evaluations[{c!r}]", e.n) for c, e in state.evaluations.items())
    for check_id, judged in state.judge_grades.items():
        yield f"judge_grades[{check_id!r}]", judged.n
        yield f"judge_grades[{check_id!r}].evaluation_n", judged.evaluation_n
    yield from ((f"agent_observations[{i}]", o.n) for i, o in enumerate(state.agent_observations))
    yield from ((f"sent_log[{i}]", m.n) for i, m in enumerate(state.sent_log))

"""``results/report.md``: one entry per ended run — finished, waiting, stopped or crashed (SPEC §9, issue 9).

Entries are made to be compared: the headline score is over every planned check (an ungraded check counts
0, a grade whose premise the persona broke is excluded and listed), and the entry names what produced it
(benchmark content hash, project version, persona and agent models, config and prompt hashes). It is dated
with the real wall-clock time in UTC; a virtual-time run's virtual dates are on a line of their own.
Every line is safe for a terminal and a Markdown reader: agent and model text (the verbatim replies, the
persona's summaries, reasons) is put on one line with control characters and escape sequences shown escaped
(``engine/sanitize.py``). Reading entries back: ``report_entries.py``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from engine.benchmark.model import Benchmark
from engine.benchmark.templates import render_templates
from engine.events import EvaluationLogged, TerminationReason
from engine.provenance import Provenance
from engine.sanitize import printable
from engine.state import RunState

REPORT_NAME = "report.md"
REPLY_CROP = 400  # characters of the agent's verbatim reply shown per imperfect answer
REPLY_JOIN = " ‖ "  # between several replies to one question
NO_REPLY = "(no reply recorded)"


@dataclass(frozen=True)
class RunSummary:
    """Everything an entry is made from: a run as it ended (the report never sees the run itself)."""

    run_id: str
    agent: str  # the adapter's name
    bench: Benchmark
    state: RunState
    ended: TerminationReason | None  # None: not ended (an entry of a run in flight)
    virtual_now: datetime  # the run's clock at the end
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # per role
    provenance: Provenance = field(default_factory=Provenance)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def one_line(text: str, limit: int = REPLY_CROP) -> str:
    """Whitespace (newlines included) collapsed to single spaces, cropped to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def agent_reply(e: EvaluationLogged) -> str:
    """The agent's verbatim reply (or replies) to the check's question, on one line."""
    replies = [" ".join(r.split()) for r in e.replies if r.strip()]
    return one_line(REPLY_JOIN.join(replies)) if replies else NO_REPLY


def format_entry(run: RunSummary, now: datetime | None = None) -> str:
    """The report entry of ``run`` (``now``: the wall-clock time to date it, UTC by default)."""
    state, bench = run.state, run.bench
    checks = {c.id: c for c in bench.checks()}
    order = {cid: i for i, cid in enumerate(checks)}
    graded = sorted(
        (e for cid, e in state.evaluations.items() if cid in checks), key=lambda e: order[e.check_id]
    )
    faults = [e for e in graded if e.persona_fault]
    counted = [e for e in graded if not e.persona_fault]
    missing = [cid for cid in checks if cid not in state.evaluations]
    stamp = (now or datetime.now(UTC)).astimezone(UTC)

    def question_of(cid: str) -> str:
        return render_templates(checks[cid].question, state.start_date)

    lines = [f"## {stamp:%Y-%m-%d %H:%M} UTC — {run.run_id}: {bench.name} @ {run.agent}"]
    lines.append("📊 " + _score_line(len(checks), counted, faults, len(missing)))
    incomplete = _incomplete_line(run, graded=len(graded), planned=len(checks))
    if incomplete:
        lines.append("📊 " + incomplete)
    if counted:
        average = sum(e.effective for e in counted) / len(counted)
        lines.append(f"📊 Evaluations: {len(counted)}, average {average:.2f}/10")
        distribution = Counter(e.effective for e in counted)
        lines.append(
            "📊 Scores: "
            + ", ".join(f"{_num(s)}: {n}" for s, n in sorted(distribution.items(), reverse=True))
        )
    else:
        lines.append("📊 Evaluations: 0")
    lines.append(f"📊 Check coverage: {len(graded)}/{len(checks)}")
    if missing:
        lines.append("📊 Not graded: " + ", ".join(missing))
    unknown = sorted(cid for cid in state.evaluations if cid not in checks)
    if unknown:
        lines.append("📊 Graded but not in the benchmark (left out): " + ", ".join(unknown))
    if faults:
        lines.append(f"📊 Persona faults ({len(faults)}, left out of the score):")
        lines.extend(
            "📊 " + _fault_line(e, question_of(e.check_id), checks[e.check_id].types) for e in faults
        )
    imperfect = [e for e in counted if e.effective < 10]
    if imperfect:
        lines.append(f"📊 Imperfect answers ({len(imperfect)}):")
        for e in imperfect:
            expected = render_templates(checks[e.check_id].answer, state.start_date)
            lines.append(
                "📊 " + _imperfect_line(e, question_of(e.check_id), expected, checks[e.check_id].types)
            )
    by_type = _per_type(counted, {cid: c.types for cid, c in checks.items()})
    if by_type:
        lines.append(
            "📊 Average per type: " + ", ".join(f"{t} {avg:.2f} ({n})" for t, (avg, n) in by_type.items())
        )
    lines.extend("📊 " + line for line in _provenance_lines(run))
    if bench.time_master:
        start = (
            bench.start_time.strftime("%Y-%m-%d %H:%M")
            if bench.start_time
            else f"{state.start_date:%Y-%m-%d}"
        )
        lines.append(
            f"📊 Virtual time: {start} → {run.virtual_now:%Y-%m-%d %H:%M} ({state.clock_jumps} clock jumps)"
        )
    lines.append(f"📊 Persona compactions: {state.persona_compactions}")
    lines.append("📊 " + _agent_compactions_line(run))
    tokens = run.tokens
    if tokens:
        lines.append(
            "📊 Tokens: "
            + ", ".join(
                f"{role} {v.get('prompt_tokens', 0)}+{v.get('completion_tokens', 0)}"
                for role, v in tokens.items()
            )
        )
    lines.append(f"📊 Run time: {state.run_seconds / 60:.1f} min")
    # agent and model text is data: no escape sequence reaches a terminal, no line break a new entry
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"


def _score_line(
    planned: int, counted: list[EvaluationLogged], faults: list[EvaluationLogged], ungraded: int
) -> str:
    """The headline: the score over every planned check (ungraded = 0, persona faults excluded), and the average."""
    if not planned:
        return "Score: — (no planned checks)"
    scored = planned - len(faults)
    score = sum(e.effective for e in counted) / scored if scored else 0.0
    over = f"over {scored} of {planned} planned checks" if faults else f"over {planned} planned checks"
    detail = f"graded {len(counted)}, ungraded {ungraded} counted as 0"
    if faults:
        detail += f", persona faults {len(faults)} excluded"
    average = f"{sum(e.effective for e in counted) / len(counted):.2f}/10" if counted else "—"
    return f"Score: {score:.2f}/10 {over} ({detail}) · average over graded {average}"


def _incomplete_line(run: RunSummary, graded: int, planned: int) -> str:
    """``Incomplete: <why it ended> — <reason> · …`` for every run that did not finish; empty for one that did."""
    state = run.state
    if run.ended is not None:
        ended = run.ended.value
    else:
        ended = "finished" if state.finished else "not ended"
    if ended == "finished":
        return ""
    reason = state.reason or "no reason recorded"
    phases = len(run.bench.phases)
    return (
        f"Incomplete: {ended} — {one_line(reason, 300)} · phases started {state.phases_started}/{phases}"
        f" · checks graded so far {graded}/{planned}"
    )


def _types(types: list[str]) -> str:
    """The check's types as its chapter line writes them, after the id: `` [AGG] [NEG]``."""
    return "".join(f" [{t}]" for t in types)


def _fault_line(e: EvaluationLogged, question: str, types: list[str]) -> str:
    attempt = ", 2nd attempt" if e.attempt == 2 else ""
    return (
        f"⚠ ({e.check_id}){_types(types)} {question} | graded: {_num(e.effective)}/10{attempt}, not counted"
        f" | fault: {one_line(e.persona_fault, 300)} [transcript #{e.n}]"
    )


def _imperfect_line(e: EvaluationLogged, question: str, expected: str, types: list[str]) -> str:
    """``[score] (id) [TYPE] question | expected: … | got: <agent's verbatim reply> | persona: <summary> — <comment>``."""
    attempt = ", 2nd attempt" if e.attempt == 2 else ""
    comment = f" — {one_line(e.comment, 300)}" if e.comment else ""
    persona = one_line(e.answer, 300) or "—"
    return (
        f"[{_num(e.effective)}/10{attempt}] ({e.check_id}){_types(types)} {question} | expected: {expected}"
        f" | got: {agent_reply(e)} | persona: {persona}{comment} [transcript #{e.n}]"
    )


def _per_type(
    evaluations: list[EvaluationLogged], types: dict[str, list[str]]
) -> dict[str, tuple[float, int]]:
    buckets: dict[str, list[float]] = defaultdict(list)
    for e in evaluations:
        for t in types.get(e.check_id, []):
            buckets[t].append(e.effective)
    return {t: (sum(v) / len(v), len(v)) for t, v in sorted(buckets.items())}


def _provenance_lines(run: RunSummary) -> list[str]:
    p = run.provenance
    return [
        f"Benchmark: {run.bench.name} · content {p.benchmark_hash or '?'} · MarathonMemBench {p.version or '?'}",
        f"Persona: {p.persona or '?'} · prompt {p.prompt_hash or '?'}",
        f"Agent: {run.agent} · model {p.agent_model or '?'}",
        f"Config: {p.config_hash or '?'}",
    ]


def _agent_compactions_line(run: RunSummary) -> str:
    """The agent's compactions seen, with its context size before → after where the adapter reported it."""
    observations = run.state.agent_observations
    if not observations:
        return "Agent compactions: none observed"
    parts = []
    for obs in observations:
        size = (
            f" ({obs.tokens_before or '?'} → {obs.tokens_after or '?'} tokens)"
            if obs.tokens_before or obs.tokens_after
            else ""
        )
        parts.append(f"phase {obs.phase_index + 1}{size}")
    return f"Agent compactions: {len(parts)} — " + "; ".join(parts)


def append_report(path: Path, run: RunSummary) -> None:
    """Append ``run``'s entry to the report file at ``path`` (``results/report.md``)."""
    append_entry(path, format_entry(run))


def append_entry(path: Path, text: str) -> None:
    """Append a formatted entry (nothing for an empty one)."""
    if not text:
        return
    with open(path, "a", encoding="utf-8") as handle:
        if handle.tell() > 0:
            handle.write("\n")
        handle.write(text)


def append_once(path: Path, text: str) -> None:
    """Append an entry saved with a checkpoint unless the report already has it (a kill came between)."""
    if not text:
        return
    try:
        done = text in path.read_text(encoding="utf-8")
    except OSError:
        done = False
    if not done:
        append_entry(path, text)

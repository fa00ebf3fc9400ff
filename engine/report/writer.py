"""``results/report.md``: one entry per ended run — finished, waiting, stopped or crashed (SPEC §9, issue 9) —
written as a pure function of a ``RunSummary`` (the report never sees the run itself), and appended once.

Entries are made to be compared: the headline and the figures of the grades (``engine/report/grades.py``) score
every planned check, and the entry names what produced it (benchmark content hash, project version, persona
and agent models, config and prompt hashes: ``provenance_lines``). It is dated with the real wall-clock time
in UTC; a virtual-time run's virtual dates are on a line of their own; a run that did not finish says why.
Every line is safe for a terminal and a Markdown reader: agent and model text (the verbatim replies, the
persona's summaries, reasons) is put on one line with control characters and escape sequences shown escaped
(``engine/sanitize.py``). Reading entries back: ``engine/report/entries.py``.

What can be trusted (issue 21, ``engine/report/trust.py``): a ``Memory:`` line beside the headline scores the
checks asked after the agent's context was last cleared, beside the score of an agent that remembers nothing; a
``Context:`` line says when the context was cleared, or that the run measures in-context recall; a ``Persona
reliability:`` line counts the persona's model calls, refused calls, guard trips, replaced grades and faults.

The memory autopsy (issue 33, ``RunAutopsy``, ``engine/report/autopsy_lines.py``): a ``Memory autopsy:`` line of
counts per class among the figures, a ``↳ memory:`` line under each imperfect answer naming its class with its
evidence, and an ``Agent actions:`` line beside the agent's compactions.

An ``Agent context:`` line gives the size of the agent's context before the exam and its peak, where the adapter
reports sizes. An ``Operator:`` line lists the operator's interventions and a ``Waits over a minute:`` line the
long waits, read from the transcript (issue 25, ``engine/report/interventions.py``). A run's entries are linked
(issue 24): each carries an ``Entry:`` id kept in the run's state, and a run that writes another (its final one
after an ``Incomplete`` one, or another ``Incomplete``) says it ``Supersedes:`` the one before; ``mmb-tui report``
shows the latest of each run.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from engine.autopsy.run_autopsy import RunAutopsy
from engine.benchmark.model import Benchmark
from engine.config import JudgeLead
from engine.events import TerminationReason
from engine.report.autopsy_lines import actions_line
from engine.report.grades import REPLY_CROP as REPLY_CROP  # imported from here (tests)
from engine.report.grades import grade_lines as grade_lines  # imported from here (the regrade)
from engine.report.grades import one_line
from engine.report.interventions import InterventionLog, intervention_lines
from engine.report.prices import priced_tokens_label
from engine.report.provenance import Provenance
from engine.report.trust import fault_count, persona_line, trust_lines, unchecked_premises
from engine.sanitize import printable
from engine.state import RunState

REPORT_NAME = "report.md"
REPORT_MODE = 0o600  # its user's only, as everything under results/ (engine/run/lock.py)


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
    lead: JudgeLead | None = None  # with a judge: which grades the figures count; None: no judge
    interventions: InterventionLog | None = None  # the operator's actions, the long waits (None: no lines)
    autopsy: RunAutopsy | None = None  # the memory autopsy (issue 33; None: no lines)


def format_entry(run: RunSummary, now: datetime | None = None) -> str:
    """The report entry of ``run`` (``now``: the wall-clock time to date it, UTC by default)."""
    state, bench = run.state, run.bench
    stamp = (now or datetime.now(UTC)).astimezone(UTC)
    grades = (state.evaluations, state.judge_grades, run.lead, state.start_date)
    headline, figures = grade_lines(bench, *grades, run.autopsy)
    planned = [c.id for c in bench.checks()]
    lines = [f"## {stamp:%Y-%m-%d %H:%M} UTC — {run.run_id}: {bench.name} @ {run.agent}"]
    lines.append("📊 " + headline)
    graded = sum(1 for cid in planned if cid in state.evaluations)
    incomplete = _incomplete_line(run, graded=graded, planned=len(planned))
    if incomplete:
        lines.append("📊 " + incomplete)
    records = (state.persona_record, state.agent_observations)
    trust = trust_lines(bench, state.evaluations, state.judge_grades, run.lead, *records)
    lines.extend("📊 " + line for line in trust)  # the memory score beside the headline, the context line
    lines.extend("📊 " + line for line in figures)
    lines.extend("📊 " + line for line in provenance_lines(bench.name, run.agent, run.provenance))
    faults = fault_count(bench, state.evaluations)
    lines.append(
        "📊 "
        + persona_line(state.persona_record, run.tokens, faults, unchecked_premises(bench, state.evaluations))
    )
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
    if run.autopsy is not None:
        lines.append("📊 " + actions_line(run.autopsy))
    if context := agent_context_line(bench, state):
        lines.append("📊 " + context)
    tokens = run.tokens
    if tokens:
        lines.append("📊 Tokens: " + priced_tokens_label(tokens, run.provenance.prices))
    virtual = bench.time_master or bench.start_time is not None  # the run's clock: "when" in its words
    lines.extend("📊 " + line for line in intervention_lines(run.interventions, virtual, run.virtual_now))
    lines.append(f"📊 Run time: {state.run_seconds / 60:.1f} min")
    if state.report_entries:  # the run's entry before this one: this one replaces it
        lines.append(f"📊 Supersedes: {state.report_entries[-1]}")
    # agent and model text is data: no escape sequence reaches a terminal, no line break a new entry
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"


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


def provenance_lines(bench: str, agent: str, p: Provenance) -> list[str]:
    """What produced an entry's grades (a run's entry and a regrade's): benchmark, persona, agent, config."""
    return [
        f"Benchmark: {bench} · content {p.benchmark_hash or '?'} · MarathonMemBench {p.version or '?'}",
        f"Persona: {p.persona or '?'} · prompt {p.prompt_hash or '?'}",
        f"Agent: {agent} · model {p.agent_model or '?'}",
        *p.agent_setup,  # its sandbox and tools (``Agent sandbox: …``, ``Agent tools: …``)
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


def agent_context_line(bench: Benchmark, state: RunState) -> str:
    """``Agent context: 41,230 tokens before the exam · peak 101,900 (phase 14)``; "" when the adapter reported
    no size. The exam: the last chapter that has checks. Before it: the size the agent answered the exam's first
    message with (the last read before the message after it), so what it brought into the exam, a new session
    that opens the exam included (the size read before that session started would be gone)."""
    readings = state.agent_context
    if not readings:
        return ""
    peak = max(readings, key=lambda r: r.tokens)
    chapter = next((p.chapter for p in reversed(bench.phases) if p.checks), None)
    start = next((p.index for p in bench.phases if p.chapter == chapter), len(bench.phases))
    sent = [s.n for s in state.sent_log if s.phase >= start][:2]  # the exam's first message, and the next
    before = [r for r in readings if len(sent) < 2 or r.n < sent[1]]
    if not sent:
        size = "— before the exam (not reached)"
    elif before:
        size = f"{before[-1].tokens:,} tokens before the exam"
    else:
        size = "— before the exam (no size read)"
    return f"Agent context: {size} · peak {peak.tokens:,} (phase {peak.phase + 1})"


def new_entry(run: RunSummary) -> str:
    """The run's next entry: ``format_entry`` with an ``Entry:`` id that tells identical entries apart. The id is
    kept in the run's state (saved with the checkpoint that holds the entry), so the run's next entry says it
    supersedes this one."""
    entry_id = uuid.uuid4().hex[:12]
    text = format_entry(run) + f"📊 Entry: {entry_id}\n"
    run.state.report_entries.append(entry_id)
    return text


def append_report(path: Path, run: RunSummary) -> None:
    """Append ``run``'s entry to the report file at ``path`` (``results/report.md``)."""
    append_entry(path, format_entry(run))


def append_entry(path: Path, text: str) -> None:
    """Append a formatted entry (nothing for an empty one). The file is its user's only (0600; one an older
    version left readable by others is made so), whatever the process's umask."""
    if not text:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, REPORT_MODE)
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, REPORT_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
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

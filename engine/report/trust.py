"""What a report entry says about how far its score can be trusted (issue 21): the memory score beside the
headline, the context line and the persona line. Pure functions of the grades and the run's records.

- **Context**: the agent's context is cleared by a new session that clears it (``bench.newSession()`` or the
  operator's, with an adapter whose new session clears the context: ``chatbot``'s keeps its whole history) and
  by the agent's own compaction (``AgentCompacted``). The entry names the clearing the exam came after, or says
  the run measures in-context recall.
- **Memory score**: the checks asked after the *last clearing before the last grade* (one after the last grade
  cleared nothing the exam saw), scored as the headline scores (the same lead, an ungraded check of a phase that
  began after the clearing counting 0, persona faults and checks the lead lacks a judge grade for left out). A
  check asked before that clearing is in-context recall, not memory. Beside it, the score of an agent that
  remembers nothing over the same checks: its one answer to every question (``AMNESIAC_REPLY``, "I don't know
  — you didn't tell me that.") graded by the rules judge against each check's question and correct answer,
  so it passes what that answer passes (a never-told check, tagged ``VOID`` or not) and nothing else; the
  mean of those grades, the checks it passes named.
- **Persona**: its model calls (the persona role's ``calls`` in the token usage), refused tool calls by tool,
  the hooks' refusals (plain-text guard, echo guard; empty completions), grades that replaced an earlier grade,
  and the persona faults (``engine/persona_record.py`` counts them while the run plays).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.benchmark.model import Benchmark, Check
from engine.config import JudgeLead
from engine.events import AgentCompacted, EvaluationLogged, JudgeGraded
from engine.models.judges import PASS_SCORE
from engine.models.rules_judge import judge
from engine.persona_record import EMPTY, PersonaRecord
from engine.report.tally import Tally, current_grades, tally

AMNESIAC_REPLY = "I don't know — you didn't tell me that."  # what an agent that remembers nothing answers
NAMED_PASSES = 6  # check ids the amnesiac passes named on the memory line, then a count
GUARD_WORDS = {"plain_text_guard": "plain-text", "echo_guard": "echo"}
SHOWN = 3  # clearings named besides the one the memory score counts from


@dataclass(frozen=True)
class Clearing:
    """A moment the agent's context was cleared."""

    n: int  # the transcript number of its event
    phase_index: int
    kind: Literal["session", "compaction"]
    by_operator: bool = False

    @property
    def first_phase(self) -> int:
        """The first phase that began after it: a benchmark's new session comes as its phase starts."""
        at_start = self.kind == "session" and not self.by_operator
        return self.phase_index if at_start else self.phase_index + 1

    def describe(self) -> str:
        if self.kind == "compaction":
            what = "the agent's compaction"
        else:
            what = "a new session by the operator" if self.by_operator else "a new session"
        return f"{what} at phase {self.phase_index + 1} [transcript #{self.n}]"


def clearings(record: PersonaRecord | None, observations: Sequence[AgentCompacted]) -> list[Clearing]:
    """Every clearing of the agent's context the run recorded, in transcript order."""
    found = [Clearing(o.n, o.phase_index, "compaction") for o in observations]
    for mark in record.sessions if record else []:
        if mark.clears and not mark.ignored:
            found.append(Clearing(mark.n, mark.phase_index, "session", mark.by_operator))
    return sorted(found, key=lambda c: c.n)


def exam_clearing(cleared: Sequence[Clearing], graded: Sequence[EvaluationLogged]) -> Clearing | None:
    """The last clearing before the last grade: the one the memory score counts from (None: none)."""
    last = max((e.n for e in graded), default=-1)
    before = [c for c in cleared if c.n < last]
    return before[-1] if before else None


def memory_line(
    bench: Benchmark,
    evaluations: Mapping[str, EvaluationLogged],
    judge_grades: Mapping[str, JudgeGraded],
    lead: JudgeLead | None,
    cleared: Sequence[Clearing],
) -> str:
    """``Memory: 6.67/10 over 3 checks asked after the context was last cleared (…) · an agent that remembers
    nothing: 3.33/10 (passes 1 of 3: 2.3)``; ``Memory: —`` when no check came after a clearing."""
    checks = bench.checks()
    graded = [evaluations[c.id] for c in checks if c.id in evaluations]
    at = exam_clearing(cleared, graded)
    if at is None:
        return "Memory: — (no check was asked after the agent's context was cleared)"
    phase_of = {c.id: p.index for p in bench.phases for c in p.checks}
    after = [
        c
        for c in checks
        if (evaluations[c.id].n > at.n if c.id in evaluations else phase_of[c.id] >= at.first_phase)
    ]
    asked = [evaluations[c.id] for c in after if c.id in evaluations]
    counted = [e for e in asked if not e.persona_fault]
    t = tally(
        lead or "persona",
        len(after),
        counted,
        len(asked) - len(counted),
        current_grades(counted, dict(judge_grades)),
    )
    scored = [c for c in after if c.id in t.scores or c.id not in evaluations]  # ungraded: 0, still over
    detail = _detail(t, ungraded=len(after) - len(asked))
    noun = "check" if t.planned == 1 else "checks"
    over = f"over {t.over} of {t.planned} {noun}" if t.over != t.planned else f"over {t.planned} {noun}"
    if t.over <= 0:
        return f"Memory: — {over} asked after the context was last cleared ({detail})"
    return (
        f"Memory: {t.score:.2f}/10 {over} asked after the context was last cleared ({detail}) · an agent that"
        f" remembers nothing: {amnesiac_part(scored)}"
    )


def amnesiac_grades(checks: Sequence[Check]) -> dict[str, float]:
    """Check id -> the rules judge's grade of ``AMNESIAC_REPLY`` to it (0-10)."""
    return {c.id: judge(c.question, c.answer, AMNESIAC_REPLY).score for c in checks}


def amnesiac_part(checks: Sequence[Check]) -> str:
    """``0.50/10 (passes 1 of 2: 3.6)``: the mean of the amnesiac's grades over ``checks``, the checks it
    passes (7/10 or more) named, and those it gets part of (``partly 3.2``)."""
    grades = amnesiac_grades(checks)
    passed = [cid for cid, score in grades.items() if score >= PASS_SCORE]
    partly = [cid for cid, score in grades.items() if 0 < score < PASS_SCORE]
    mean = sum(grades.values()) / len(grades) if grades else 0.0
    part = f"{mean:.2f}/10 (passes {len(passed)} of {len(grades)}"
    if passed:
        part += ": " + _ids(passed)
    if partly:
        part += "; partly " + _ids(partly)
    return part + ")"


def _ids(ids: Sequence[str]) -> str:
    """``3.6, 4.1`` and, past ``NAMED_PASSES``, ``and 3 more``."""
    shown = ", ".join(ids[:NAMED_PASSES])
    return shown + (f" and {len(ids) - NAMED_PASSES} more" if len(ids) > NAMED_PASSES else "")


def trust_lines(
    bench: Benchmark,
    evaluations: Mapping[str, EvaluationLogged],
    judge_grades: Mapping[str, JudgeGraded],
    lead: JudgeLead | None,
    record: PersonaRecord | None,
    observations: Sequence[AgentCompacted],
) -> list[str]:
    """The memory score beside the headline and the context line, without their 📊 marks (a run's entry and
    a regrade's)."""
    cleared = clearings(record, observations)
    graded = [e for c in bench.checks() if (e := evaluations.get(c.id)) is not None]
    return [
        memory_line(bench, evaluations, judge_grades, lead, cleared),
        context_line(record, cleared, graded),
    ]


def fault_count(bench: Benchmark, evaluations: Mapping[str, EvaluationLogged]) -> int:
    """The planned checks whose latest grade is a persona fault (as the headline excludes them)."""
    return sum(1 for c in bench.checks() if (e := evaluations.get(c.id)) is not None and e.persona_fault)


def _detail(t: Tally, ungraded: int) -> str:
    """As the headline words it: the checks scored, the ungraded counting 0, the excluded."""
    detail = f"graded {len(t.scores)}, ungraded {ungraded} counted as 0"
    if t.faults:
        detail += f", persona faults {t.faults} excluded"
    if t.unjudged:
        detail += f", not graded by the judge {len(t.unjudged)} excluded"
    return detail


def context_line(
    record: PersonaRecord | None, cleared: Sequence[Clearing], graded: Sequence[EvaluationLogged]
) -> str:
    """``Context: cleared by a new session at phase 3 [transcript #40] …`` or ``Context: never cleared: this
    run measures in-context recall`` (with the new sessions that did not clear it)."""
    at = exam_clearing(cleared, graded)
    if at is not None:
        line = f"Context: cleared by {at.describe()}"
        before = sum(1 for e in graded if e.n < at.n)
        if before:
            what = (
                "1 check graded before it measures"
                if before == 1
                else f"{before} checks graded before it measure"
            )
            line += f"; {what} in-context recall"
        line += _named(" · earlier also by ", [c for c in cleared if c.n < at.n])
        line += _named(" · after the last graded check by ", [c for c in cleared if c.n > at.n])
    elif cleared:
        line = "Context: never cleared before a graded check: this run measures in-context recall"
        line += _named(" · after the last graded check by ", cleared)
    else:
        line = "Context: never cleared: this run measures in-context recall"
    kept = [m for m in record.sessions if m.ignored or not m.clears] if record else []
    if kept:
        mark = kept[-1]
        where = f"phase {mark.phase_index + 1} [transcript #{mark.n}]"
        why = (
            "ignored (ignore_session_break)"
            if mark.ignored
            else "kept it (this agent's new session keeps its history)"
        )
        more = f" ({len(kept)} such)" if len(kept) > 1 else ""
        line += f" · the new session at {where} {why}{more}"
    if record is None:
        line += " · new sessions not recorded (a run from before they were)"
    elif record.since:
        line += f" · new sessions recorded from transcript #{record.since}"
    return line


def _named(words: str, found: Sequence[Clearing]) -> str:
    """``words`` and the latest ``SHOWN`` of ``found`` (``and 2 more`` before them); empty for none."""
    if not found:
        return ""
    more = f"{len(found) - SHOWN} more and " if len(found) > SHOWN else ""
    return words + more + "; ".join(c.describe() for c in found[-SHOWN:])


def unchecked_premises(bench: Benchmark, evaluations: Mapping[str, EvaluationLogged]) -> list[str]:
    """The graded checks whose premise check found nothing to look for in the transcript (a VOID answer, a
    derived figure alone, a run older than the told log)."""
    return [c.id for c in bench.checks() if (e := evaluations.get(c.id)) is not None and not e.premise]


def persona_line(
    record: PersonaRecord | None,
    tokens: Mapping[str, Mapping[str, Any]],
    faults: int,
    unchecked: Sequence[str] = (),
) -> str:
    """``Persona reliability: model calls 412 · refused calls 3 (log_evaluation 2, facts_mark_told 1) · guard
    trips 1 (plain-text 1) · replaced grades 3 (2 by an attempt 2) · persona faults 2 · no premise check: 3.6``:
    replaced grades counts every grade that replaced an earlier grade of its check, the attempt 2s among them."""
    calls = tokens.get("persona", {}).get("calls")
    parts = [f"model calls {calls if calls is not None else '?'}"]
    tail = [f"no premise check: {', '.join(unchecked)}"] if unchecked else []
    if record is None:
        parts += [
            f"persona faults {faults}",
            *tail,
            "refused calls, guard trips and replaced grades not recorded",
        ]
        return "Persona reliability: " + " · ".join(parts)
    parts.append(f"refused calls {record.refused_total}" + _breakdown(record.refused))
    guards = {GUARD_WORDS.get(k, k): n for k, n in record.guards.items() if k != EMPTY}
    parts.append(f"guard trips {record.guards_total}" + _breakdown(guards))
    if record.guards.get(EMPTY):
        parts.append(f"empty completions {record.guards[EMPTY]}")
    replaced = f"replaced grades {record.replaced_total}"
    if record.replaced_total:
        replaced += f" ({record.second_attempts} by an attempt 2)"
    parts += [replaced, f"persona faults {faults}", *tail]
    if record.since:
        parts.append(f"counted from transcript #{record.since}")
    return "Persona reliability: " + " · ".join(parts)


def _breakdown(counts: Mapping[str, int]) -> str:
    """`` (log_evaluation 2, facts_mark_told 1)``: most first, then by name; empty for none."""
    shown = sorted(((name, n) for name, n in counts.items() if n), key=lambda item: (-item[1], item[0]))
    return " (" + ", ".join(f"{name} {n}" for name, n in shown) + ")" if shown else ""

"""The grade lines of a report entry (``results/report.md``, SPEC §9): its headline score and the figures under it —
evaluations, the score distribution, the judge's agreement, coverage, persona faults, imperfect answers,
disagreements and the averages per type — for a run's entry (``engine/report/writer.py``) and a regrade's. A
check's kinds are its ``[TYPE]`` tags, else inferred from its question and answer and shown marked (``[AGG~]``,
``AGG~ 5.00 (2)``: ``engine/benchmark/check_kinds.py``).

The headline score is over every planned check: an ungraded check counts 0, a grade whose premise the persona
broke is excluded and listed. With a judge (``engine/judge/role.py``) the figures count the grades ``lead``
names (the persona's, the judge's, or the lower of both: ``engine/report/tally.py``) and the headline says
which; each imperfect answer shows both grades side by side, a ``Judge:`` line gives the agreement, every
disagreement is listed in full, and a persona fault shows the judge's grade of the same answer too. Without
one the lines are as they were before issue 14. The agent's verbatim replies are put on one line here
(``one_line``, ``agent_reply``); the writer makes every line printable.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from datetime import date

from engine.autopsy.run_autopsy import RunAutopsy
from engine.benchmark.check_kinds import INFERRED_MARK, kinds_of
from engine.benchmark.model import Benchmark
from engine.benchmark.templates import render_templates
from engine.config import JudgeLead
from engine.events import EvaluationLogged, JudgeGraded
from engine.models.judges import PASS_SCORE
from engine.report.autopsy_lines import attribution_line, summary_line
from engine.report.tally import LEADS, Tally, agreement, current_grades, disagreements, not_judged, tally

REPLY_CROP = 400  # characters of the agent's verbatim reply shown per imperfect answer
REPLY_JOIN = " ‖ "  # between several replies to one question
NO_REPLY = "(no reply recorded)"


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def one_line(text: str, limit: int = REPLY_CROP) -> str:
    """Whitespace (newlines included) collapsed to single spaces, cropped to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def agent_reply(e: EvaluationLogged, limit: int = REPLY_CROP) -> str:
    """The agent's verbatim reply (or replies) to the check's question, on one line."""
    replies = [" ".join(r.split()) for r in e.replies if r.strip()]
    return one_line(REPLY_JOIN.join(replies), limit) if replies else NO_REPLY


def grade_lines(
    bench: Benchmark,
    evaluations: dict[str, EvaluationLogged],
    judge_grades: dict[str, JudgeGraded],
    lead: JudgeLead | None,
    start_date: date,
    autopsy: RunAutopsy | None = None,
) -> tuple[str, list[str]]:
    """An entry's headline and the figures of its grades, without their 📊 marks: evaluations, scores, the
    judge's agreement, coverage, persona faults, imperfect answers, disagreements, averages per type.
    ``lead``: which grades count (None: no judge, the entry as before issue 14). A regrade's entry has them too.
    ``autopsy``: the memory autopsy's summary first and its line under each imperfect answer."""
    checks = {c.id: c for c in bench.checks()}
    kinds = {cid: kinds_of(c).shown() for cid, c in checks.items()}  # an untagged check's inferred: ``AGG~``
    order = {cid: i for i, cid in enumerate(checks)}
    graded = sorted((e for cid, e in evaluations.items() if cid in checks), key=lambda e: order[e.check_id])
    faults = [e for e in graded if e.persona_fault]
    counted = [e for e in graded if not e.persona_fault]
    missing = [cid for cid in checks if cid not in evaluations]
    grades = current_grades(counted, judge_grades)
    main = tally(lead or "persona", len(checks), counted, len(faults), grades)

    def question_of(cid: str) -> str:
        return render_templates(checks[cid].question, start_date)

    lines: list[str] = []
    imperfect = [e for e in counted if main.scores.get(e.check_id, 10) < 10]
    if autopsy is not None:
        lines.append(summary_line(autopsy, [e.check_id for e in imperfect]))
    if main.scores:
        lines.append(f"Evaluations: {len(main.scores)}, average {main.average:.2f}/10")
        distribution = Counter(main.scores.values())
        lines.append(
            "Scores: " + ", ".join(f"{_num(s)}: {n}" for s, n in sorted(distribution.items(), reverse=True))
        )
    else:
        lines.append("Evaluations: 0")
    if lead is not None:
        tallies = [tally(each, len(checks), counted, len(faults), grades) for each in LEADS]
        lines.append(_judge_line(counted, grades, judge_grades, tallies))
    lines.append(f"Check coverage: {len(graded)}/{len(checks)}")
    if missing:
        lines.append("Not graded: " + ", ".join(missing))
    unknown = sorted(cid for cid in evaluations if cid not in checks)
    if unknown:
        lines.append("Graded but not in the benchmark (left out): " + ", ".join(unknown))
    if faults:
        lines.append(f"Persona faults ({len(faults)}, left out of the score):")
        judged = current_grades(faults, judge_grades)  # a faulted check's judge grade, shown, never counted
        for e in faults:
            judge = _judge_part(e, judged.get(e.check_id)) if lead is not None else ""
            lines.append(_fault_line(e, question_of(e.check_id), kinds[e.check_id], judge))
    if imperfect:
        lines.append(f"Imperfect answers ({len(imperfect)}):")
        for e in imperfect:
            expected = render_templates(checks[e.check_id].answer, start_date)
            judge = _judge_part(e, grades.get(e.check_id)) if lead is not None else ""
            question, types = question_of(e.check_id), kinds[e.check_id]
            lines.append(_imperfect_line(e, question, expected, types, main.scores[e.check_id], judge))
            if autopsy is not None and autopsy.access and e.check_id in autopsy.attributions:
                lines.append(attribution_line(autopsy.attributions[e.check_id]))
    disputed = disagreements(counted, grades) if lead is not None else []
    if disputed:
        lines.append(f"Disagreements ({len(disputed)} of {agreement(counted, grades)[1]}), each in full:")
        for e in disputed:
            expected = render_templates(checks[e.check_id].answer, start_date)
            question, types = question_of(e.check_id), kinds[e.check_id]
            lines.append(_disagreement_line(e, question, expected, types, grades[e.check_id]))
    if by_type := _per_type(main.scores, kinds):
        lines.append(_per_type_line(by_type))
    if lead is None:
        return _score_line(len(checks), counted, faults, len(missing)), lines
    return _lead_score_line(main, len(missing)), lines


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


LEAD_WORDS: dict[JudgeLead, str] = {
    "persona": "the persona's grades",
    "judge": "the judge's grades",
    "both": "the lower of the persona's and the judge's grades",
}
"""How a headline with a judge says which grades it counts."""


def _lead_score_line(t: Tally, ungraded: int) -> str:
    """The headline of a run with a judge: as ``_score_line``, saying which grades it counts; a check the lead
    needs a judge grade for and has none (the judge failed) is excluded, like a persona fault."""
    if not t.planned:
        return "Score: — (no planned checks)"
    over = (
        f"over {t.over} of {t.planned} planned checks"
        if t.over != t.planned
        else f"over {t.planned} planned checks"
    )
    detail = f"graded {len(t.scores)}, ungraded {ungraded} counted as 0"
    if t.faults:
        detail += f", persona faults {t.faults} excluded"
    if t.unjudged:
        detail += f", not graded by the judge {len(t.unjudged)} excluded"
    average = f"{t.average:.2f}/10" if t.average is not None else "—"
    return f"Score: {_shown(t)} by {LEAD_WORDS[t.lead]} {over} ({detail}) · average over graded {average}"


def _shown(t: Tally) -> str:
    """``7.50/10``; ``—`` when every planned check was excluded (no score to give)."""
    return f"{t.score:.2f}/10" if t.over > 0 else "—"


def _judge_line(
    counted: list[EvaluationLogged],
    grades: dict[str, JudgeGraded],
    every_grade: dict[str, JudgeGraded],
    tallies: list[Tally],
) -> str:
    """``Judge: <name> · agreement 4 of 5 (80%) … · scores: persona …, judge …, both …`` and the checks the judge
    could not grade."""
    names = sorted({g.judge for g in every_grade.values()}) or ["none yet"]
    agreed, of = agreement(counted, grades)
    rate = f" ({100 * agreed / of:.0f}%)" if of else ""
    scores = ", ".join(f"{t.lead} {_shown(t)}" for t in tallies)
    line = (
        f"Judge: {', '.join(names)} · agreement {agreed} of {of}{rate}: the same pass/fail at "
        f"{PASS_SCORE:g}/10 · scores: {scores}"
    )
    failed = not_judged(counted, grades)
    if not failed:
        return line
    why = [
        f"{cid} ({one_line(g.error, 120)})" if (g := grades.get(cid)) else f"{cid} (not yet)"
        for cid in failed
    ]
    return line + " · not graded by the judge: " + ", ".join(why)


def _types(types: list[str]) -> str:
    """The check's types as its chapter line writes them, after the id: `` [AGG] [NEG]``."""
    return "".join(f" [{t}]" for t in types)


def _fault_line(e: EvaluationLogged, question: str, types: list[str], judge: str = "") -> str:
    """``⚠ (id) [TYPE] question | graded: 0/10, not counted | fault: <why> | judge: [10/10] <comment>
    [transcript #n]`` (``judge``: its part, with a judge)."""
    attempt = ", 2nd attempt" if e.attempt == 2 else ""
    return (
        f"⚠ ({e.check_id}){_types(types)} {question} | graded: {_num(e.effective)}/10{attempt}, not counted"
        f" | fault: {one_line(e.persona_fault, 300)}{judge} [transcript #{e.n}]"
    )


def _imperfect_line(
    e: EvaluationLogged, question: str, expected: str, types: list[str], score: float, judge: str = ""
) -> str:
    """``[score] (id) [TYPE] question | expected: … | got: <agent's verbatim reply> | persona: <summary> — <comment>``;
    with a judge (``judge``: its part of the line) the persona's grade before her summary and ``| judge: …``
    (``score``: the one the entry counts)."""
    attempt = ", 2nd attempt" if e.attempt == 2 else ""
    comment = f" — {one_line(e.comment, 300)}" if e.comment else ""
    persona = one_line(e.answer, 300) or "—"
    grades = f"[{_num(e.effective)}/10] " if judge else ""
    return (
        f"[{_num(score)}/10{attempt}] ({e.check_id}){_types(types)} {question} | expected: {expected}"
        f" | got: {agent_reply(e)} | persona: {grades}{persona}{comment}{judge} [transcript #{e.n}]"
    )


def _judge_part(e: EvaluationLogged, grade: JudgeGraded | None, limit: int = 300) -> str:
    """`` | judge: [6/10] <comment>`` on an answer's line (``[error] <why>`` when it gave no grade)."""
    if grade is None:
        return " | judge: [none] not graded by the judge"
    if grade.score is None:
        return f" | judge: [error] {one_line(grade.error, limit)}"
    judged = grade.score * (0.5 if e.attempt == 2 else 1.0)
    return f" | judge: [{_num(judged)}/10]" + (f" {one_line(grade.comment, limit)}" if grade.comment else "")


def _disagreement_line(
    e: EvaluationLogged, question: str, expected: str, types: list[str], grade: JudgeGraded
) -> str:
    """``≠ (id) [TYPE] question | expected: … | got: <the whole reply> | persona: [10/10] <summary> — <comment>
    | judge: [0/10] <comment> [transcript #n]``: a disagreement in full, nothing cropped."""
    whole = sys.maxsize
    comment = f" — {one_line(e.comment, whole)}" if e.comment else ""
    persona = one_line(e.answer, whole) or "—"
    return (
        f"≠ ({e.check_id}){_types(types)} {question} | expected: {expected} | got: {agent_reply(e, whole)}"
        f" | persona: [{_num(e.effective)}/10] {persona}{comment}{_judge_part(e, grade, whole)}"
        f" [transcript #{e.n}]"
    )


def _per_type(scores: dict[str, float], kinds: dict[str, list[str]]) -> dict[str, tuple[float, int]]:
    """Kind -> (average, count) over the graded checks; a kind inferred for any of them marked ``AGG~``."""
    buckets: dict[str, list[float]] = defaultdict(list)
    inferred: set[str] = set()
    for check_id, score in scores.items():
        for shown in kinds.get(check_id, []):
            kind = shown.removesuffix(INFERRED_MARK)
            buckets[kind].append(score)
            if shown != kind:
                inferred.add(kind)
    return {
        kind + (INFERRED_MARK if kind in inferred else ""): (sum(v) / len(v), len(v))
        for kind, v in sorted(buckets.items())
    }


def _per_type_line(by_type: dict[str, tuple[float, int]]) -> str:
    """``Average per type: AGG~ 5.00 (2), VOID 10.00 (1) (~: kinds inferred from the questions and answers of
    untagged checks)``; the note only where a kind was inferred."""
    line = "Average per type: " + ", ".join(f"{t} {avg:.2f} ({n})" for t, (avg, n) in by_type.items())
    if any(t.endswith(INFERRED_MARK) for t in by_type):
        line += f" ({INFERRED_MARK}: kinds inferred from the questions and answers of untagged checks)"
    return line

"""The figures of a report entry by the grades it leads with, and the judge's agreement (issue 14).

A run with a judge (``engine/judge/role.py``) has two grades of each answer. ``lead`` says which one the entry's
figures count: the persona's (``persona``), the judge's (``judge``), or the lower of the two (``both``: an
answer counts only as far as both graders agree it is right). The judge's grade counts with the same attempt-2
factor as the persona's. A check the lead needs a judge grade for and has none (the judge failed) is left
out of that score and named, as a persona fault is. Agreement is over the checks both graded (persona faults
aside): the same verdict at ``PASS_SCORE`` (7/10) on the raw scores. Pure functions of the grades: the run's
entry and a regrade's are written from them (``engine/report/grades.py`` ``grade_lines``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.config import JudgeLead
from engine.events import EvaluationLogged, JudgeGraded
from engine.models.judges import PASS_SCORE

LEADS: tuple[JudgeLead, ...] = ("persona", "judge", "both")


def current_grades(
    evaluations: Iterable[EvaluationLogged], grades: dict[str, JudgeGraded]
) -> dict[str, JudgeGraded]:
    """The judge's grades of these very evaluations (a grade of an earlier grade of the check is stale)."""
    current = {}
    for e in evaluations:
        grade = grades.get(e.check_id)
        if grade is not None and grade.evaluation_n == e.n:
            current[e.check_id] = grade
    return current


def judge_effective(e: EvaluationLogged, grade: JudgeGraded | None) -> float | None:
    """The judge's score as it counts (halved for a 2nd attempt, like the persona's); None without one."""
    if grade is None or grade.score is None:
        return None
    return grade.score * (0.5 if e.attempt == 2 else 1.0)


def lead_score(e: EvaluationLogged, grade: JudgeGraded | None, lead: JudgeLead) -> float | None:
    """The score the check counts under ``lead``; None when the lead needs a judge grade the check lacks."""
    if lead == "persona":
        return e.effective
    judged = judge_effective(e, grade)
    if judged is None:
        return None
    return judged if lead == "judge" else min(e.effective, judged)


@dataclass(frozen=True)
class Tally:
    """One way of scoring an entry: each counted check's score, over the planned checks."""

    lead: JudgeLead
    planned: int
    scores: dict[str, float]  # check id -> the score it counts (graded, premise held, graded under the lead)
    faults: int  # persona faults: excluded
    unjudged: list[str]  # graded, but the lead needs a judge grade they lack: excluded

    @property
    def over(self) -> int:
        """The checks the score is over: the planned ones but the excluded."""
        return self.planned - self.faults - len(self.unjudged)

    @property
    def score(self) -> float:
        """Over every planned check but the excluded, an ungraded one counting 0."""
        return sum(self.scores.values()) / self.over if self.over > 0 else 0.0

    @property
    def average(self) -> float | None:
        return sum(self.scores.values()) / len(self.scores) if self.scores else None


def tally(
    lead: JudgeLead,
    planned: int,
    counted: list[EvaluationLogged],
    faults: int,
    grades: dict[str, JudgeGraded],
) -> Tally:
    """The figures under ``lead`` of the ``counted`` evaluations (``grades``: the judge's current ones)."""
    scores: dict[str, float] = {}
    unjudged: list[str] = []
    for e in counted:
        score = lead_score(e, grades.get(e.check_id), lead)
        if score is None:
            unjudged.append(e.check_id)
        else:
            scores[e.check_id] = score
    return Tally(lead, planned, scores, faults, unjudged)


def disagreements(counted: list[EvaluationLogged], grades: dict[str, JudgeGraded]) -> list[EvaluationLogged]:
    """The counted checks whose two grades give different verdicts at ``PASS_SCORE``."""
    return [e for e in counted if (g := grades.get(e.check_id)) is not None and _disagree(e, g)]


def _disagree(e: EvaluationLogged, grade: JudgeGraded) -> bool:
    return grade.score is not None and (e.score >= PASS_SCORE) != (grade.score >= PASS_SCORE)


def agreement(counted: list[EvaluationLogged], grades: dict[str, JudgeGraded]) -> tuple[int, int]:
    """How many of the counted checks the judge gave a score have the same verdict as the persona's, of how
    many."""
    both = [e for e in counted if (g := grades.get(e.check_id)) is not None and g.score is not None]
    return len(both) - len(disagreements(both, grades)), len(both)


def not_judged(counted: list[EvaluationLogged], grades: dict[str, JudgeGraded]) -> list[str]:
    """The counted checks the judge gave no score (it failed, or never graded them)."""
    return [e.check_id for e in counted if judge_effective(e, grades.get(e.check_id)) is None]


def run_score(
    planned: Iterable[str] | None,
    evaluations: Mapping[str, EvaluationLogged],
    grades: Mapping[str, JudgeGraded],
    lead: JudgeLead,
    finished: bool,
) -> float | None:
    """The one score front ends show for a run (runs table, headless progress, dashboard), counted as its report
    counts it: persona faults and checks the lead lacks a judge grade for left out, under ``lead``; a finished
    run's is its headline (over the planned checks, an ungraded one counting 0), a playing run's the average
    of its counted grades so far. ``planned``: the benchmark's check ids (None: the graded ones). None before
    a counted grade."""
    planned_ids = set(evaluations) if planned is None else set(planned)
    graded = [e for check_id, e in evaluations.items() if check_id in planned_ids]
    counted = [e for e in graded if not e.persona_fault]
    current = dict(grades)
    result = tally(lead, len(planned_ids), counted, len(graded) - len(counted), current)
    if not result.scores:
        return None
    return result.score if finished else result.average

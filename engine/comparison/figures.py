"""The figures of a sample of runs (a run's repeats, a matrix cell, or one run): what the summary entry,
``mmb-tui compare`` and the comparison screen show, computed once here.

- the score: the mean of the runs' headline scores with its 95 % bootstrap interval (``engine/comparison/stats.py``);
- per check type: the same over each run's score of that type's checks;
- pass^k for k = 1..n (τ²-bench): per check C(c, k) / C(n, k), c the runs that answered it right (a counted
  grade of 7/10 or more), n the runs that graded it without a persona fault; averaged over the checks;
- coverage (graded / planned) and persona faults summed over the runs; tokens and cost per role, totals.

A run still playing is not in the sample (``GroupFigures.playing`` names it): its score counts the checks not
asked yet as 0, so it would pull every figure down for no reason until it ends. ``compare.figures_of`` leaves
it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.comparison.results import RunResult
from engine.comparison.stats import Estimate, estimate, pass_hat_ks


@dataclass(frozen=True)
class TypeFigures:
    """One check type over the sample."""

    score: Estimate
    graded: int
    planned: int
    faults: int
    pass_k: list[float | None]


@dataclass(frozen=True)
class GroupFigures:
    name: str
    runs: tuple[str, ...]  # the runs with a result (the sample)
    agents: tuple[str, ...]
    benchmarks: tuple[str, ...]
    score: Estimate
    types: dict[str, TypeFigures]
    graded: int
    planned: int
    faults: int
    finished: int
    pass_k: list[float | None]  # k = 1..n, the mean over checks
    per_check: dict[str, tuple[int, int, list[float | None]]]  # check -> (right, runs counted, pass^k)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # role -> totals over the runs
    costs: dict[str, float] = field(default_factory=dict)  # role -> USD over the runs with its price
    missing: tuple[str, ...] = ()  # runs of the group without a result yet
    playing: tuple[str, ...] = ()  # runs of the group still playing: left out of every figure until they end

    @property
    def n(self) -> int:
        return len(self.runs)

    @property
    def cost(self) -> float | None:
        return sum(self.costs.values()) if self.costs else None


def _outcomes(results: Sequence[RunResult], checks: list[str]) -> dict[str, list[bool]]:
    """Per check, the runs' outcomes (True: answered right), persona faults left out."""
    outcomes: dict[str, list[bool]] = {}
    for check in checks:
        seen = [r.passed(check) for r in results if check in r.planned]
        outcomes[check] = [bool(p) for p in seen if p is not None]
    return outcomes


def group_figures(
    name: str, results: Sequence[RunResult], missing: Sequence[str] = (), playing: Sequence[str] = ()
) -> GroupFigures:
    """The figures of ``results`` (at least one run); ``missing`` and ``playing`` (left out) are only named."""
    if not results:
        raise ValueError(f"{name}: no run with a result")
    n = len(results)
    checks = list(dict.fromkeys(c for r in results for c in r.planned))
    outcomes = _outcomes(results, checks)
    per_check = {c: (sum(o), len(o), pass_hat_ks([o], n)) for c, o in outcomes.items()}
    types: dict[str, TypeFigures] = {}
    for check_type in sorted({t for r in results for t in r.types()}):
        scores = [s for s in (r.type_score(check_type) for r in results) if s is not None]
        of_type = [c for c in checks if any(check_type in r.planned.get(c, []) for r in results)]
        in_type = [(r, [c for c in r.planned if check_type in r.planned[c]]) for r in results]
        if not scores:
            continue
        types[check_type] = TypeFigures(
            score=estimate(scores),
            graded=sum(1 for r, cs in in_type for c in cs if c in r.grades),
            planned=sum(len(cs) for _, cs in in_type),
            faults=sum(1 for r, cs in in_type for c in cs if c in r.grades and r.grades[c].persona_fault),
            pass_k=pass_hat_ks([outcomes[c] for c in of_type], n),
        )
    tokens: dict[str, dict[str, int]] = {}
    costs: dict[str, float] = {}
    for r in results:
        for role, usage in r.tokens.items():
            total = tokens.setdefault(role, {"prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0})
            for key in total:
                total[key] += usage.get(key, 0)
        for role, usd in r.costs.items():
            costs[role] = costs.get(role, 0.0) + usd
    return GroupFigures(
        name=name,
        runs=tuple(r.run_id for r in results),
        agents=tuple(dict.fromkeys(r.agent for r in results)),
        benchmarks=tuple(dict.fromkeys(r.benchmark for r in results)),
        score=estimate([r.score for r in results]),
        types=types,
        graded=sum(r.graded for r in results),
        planned=sum(len(r.planned) for r in results),
        faults=sum(r.faults for r in results),
        finished=sum(1 for r in results if r.finished),
        pass_k=pass_hat_ks(list(outcomes.values()), n),
        per_check=per_check,
        tokens=tokens,
        costs=costs,
        missing=tuple(missing),
        playing=tuple(playing),
    )

"""Across repeats (issue 33): which memory failures are systematic and which are noise.

- per check, its **flip rate**: the share of pairs of repeats that disagree on it (one answered right at 7/10,
  the other not; a check left out of a run's score is in no pair), and the memory-autopsy class each failure
  took (``engine/autopsy/attribution.py``): a check failed every time for the same class is systematic, one
  that flips is noise;
- for two rows, the **smallest difference** in mean score their repeats can tell apart: two-sided 5 %, power
  80 %, ``(1.96 + 0.84) × √(s₁²/n₁ + s₂²/n₂)`` over the runs' headline scores (on-policy runs flip 10–60 % of
  checks between identical trials: a difference under this is noise).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.autopsy.run_autopsy import run_autopsy
from engine.comparison.figures import GroupFigures
from engine.comparison.results import ResultError, RunResult, load_result
from engine.config import Config

Z_SUM = 1.96 + 0.84  # two-sided 5 % and 80 % power


@dataclass(frozen=True)
class CheckFlips:
    check_id: str
    passes: int
    fails: int
    classes: Counter[str] = field(default_factory=Counter)  # the memory class of each failure

    @property
    def flip_rate(self) -> float | None:
        """The share of pairs of repeats that disagree on the check; None with fewer than two counted."""
        n = self.passes + self.fails
        return self.passes * self.fails / (n * (n - 1) / 2) if n >= 2 else None


def flip_rate(outcomes: Sequence[bool | None]) -> float | None:
    counted = [o for o in outcomes if o is not None]
    return CheckFlips("", sum(counted), len(counted) - sum(counted)).flip_rate


def check_flips(results: Sequence[RunResult], classes: Sequence[dict[str, str]]) -> list[CheckFlips]:
    """Per planned check (in the benchmark's order) its passes, failures and the class of each failure;
    ``classes``: per run, check id -> its memory-autopsy class."""
    planned = list(dict.fromkeys(c for r in results for c in r.planned))
    found = []
    for check in planned:
        outcomes = [
            (r.passed(check), by_check.get(check, "not graded"))
            for r, by_check in zip(results, classes, strict=True)
        ]
        failed = Counter(cls for passed, cls in outcomes if passed is False)
        passes = sum(1 for passed, _ in outcomes if passed)
        found.append(CheckFlips(check, passes, sum(failed.values()), failed))
    return found


def detectable_difference(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The smallest difference in mean score samples ``a`` and ``b`` can tell apart (None: under two runs)."""
    if len(a) < 2 or len(b) < 2:
        return None
    return Z_SUM * math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))


def _results(config: Config, fig: GroupFigures) -> tuple[list[RunResult], list[dict[str, str]]]:
    results, classes = [], []
    for run_id in fig.runs:
        try:
            result = load_result(config, run_id)
        except ResultError:
            continue
        if result is None:
            continue
        autopsy = run_autopsy(config.results_path() / run_id, result.grades)
        results.append(result)
        classes.append({c: str(a.cls) for c, a in autopsy.attributions.items()})
    return results, classes


def flip_line(name: str, flips: list[CheckFlips], runs: int) -> str:
    """``G (3 runs): 1 of 4 checks flips · 3.1 flips 67%, failed 2: lost 1, never written 1 · 3.3 always fails:
    not decidable 3``: every check failed at least once."""
    failed = [f for f in flips if f.fails]
    if not failed:
        return f"{name} ({runs} runs): no check failed"
    flipping = sum(1 for f in flips if f.passes and f.fails)
    parts = []
    for f in failed:
        why = ", ".join(f"{cls} {n}" for cls, n in f.classes.most_common())
        head = (
            f"{f.check_id} always fails"
            if not f.passes
            else f"{f.check_id} flips {f.flip_rate or 0:.0%}, failed {f.fails}"
        )
        parts.append(f"{head}: {why}")
    return f"{name} ({runs} runs): {flipping} of {len(flips)} checks flip · " + " · ".join(parts)


@dataclass(frozen=True)
class RowFlips:
    """One row of ``compare`` across its repeats: the runs' headline scores and each check's flips."""

    scores: list[float]
    checks: list[CheckFlips]


def row_flips(config: Config, figures: list[GroupFigures]) -> dict[str, RowFlips]:
    """Per row (by name) its repeats' scores and per check its flips, read once for the lines and the export."""
    found = {}
    for fig in figures:
        results, classes = _results(config, fig)
        found[fig.name] = RowFlips([r.score for r in results], check_flips(results, classes))
    return found


def flips_json(row: RowFlips) -> dict[str, dict[str, object]]:
    """Per check its flip rate (None under two counted runs) and the memory class of each failure, for
    ``compare --json``."""
    return {f.check_id: {"flip_rate": f.flip_rate, "failures": dict(f.classes)} for f in row.checks}


def repeat_lines(
    config: Config, figures: list[GroupFigures], rows: dict[str, RowFlips] | None = None
) -> list[str]:
    """The lines ``mmb-tui compare`` prints under its table: each row of repeats' flips, and for each pair of
    rows the difference their repeats can tell apart."""
    rows = rows if rows is not None else row_flips(config, figures)
    samples: list[tuple[str, list[float]]] = []
    lines = []
    for fig in figures:
        row = rows[fig.name]
        samples.append((fig.name, row.scores))
        if len(row.scores) >= 2:
            lines.append(flip_line(fig.name, row.checks, len(row.scores)))
    for i, (a, scores_a) in enumerate(samples):
        for b, scores_b in samples[i + 1 :]:
            smallest = detectable_difference(scores_a, scores_b)
            if smallest is None:
                continue
            seen = abs(statistics.fmean(scores_a) - statistics.fmean(scores_b))
            verdict = "beyond it" if seen > smallest else "within the noise"
            lines.append(
                f"{a} vs {b}: difference {seen:.2f}; the smallest these repeats can tell apart ≈ {smallest:.2f} "
                f"points ({verdict})"
            )
    return lines

"""Statistics over repeated runs: a mean with a bootstrap confidence interval, and pass^k (τ²-bench).

Pure functions of plain numbers, so the summary entry, ``mmb-tui compare`` and the comparison screen give the
same figures and tests can hold them against values computed by hand. The bootstrap draws from a generator
seeded with a fixed value: the same runs always give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class Estimate:
    """A sample's mean and its confidence interval (``low == high == mean`` for one value)."""

    mean: float
    low: float
    high: float
    n: int

    def label(self, digits: int = 2) -> str:
        """``8.33 [6.67, 10.00]``: the mean and its interval."""
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean (0 for no values, which callers avoid)."""
    return sum(values) / len(values) if values else 0.0


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of sorted values: the smallest value with at least ``fraction`` of the
    values at or below it."""
    rank = max(1, math.ceil(fraction * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def bootstrap_ci(
    values: Sequence[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean: ``resamples`` samples of ``len(values)`` drawn with
    replacement, their means sorted, cut at (1 - confidence)/2 and (1 + confidence)/2 (nearest rank).
    One value (or all equal) gives a zero-width interval; no values raise ``ValueError``."""
    if not values:
        raise ValueError("bootstrap_ci needs at least one value")
    if len(set(values)) == 1:
        return values[0], values[0]
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return _percentile(means, tail), _percentile(means, 1 - tail)


def estimate(values: Sequence[float], seed: int = SEED) -> Estimate:
    """The mean of ``values`` with its bootstrap interval."""
    low, high = bootstrap_ci(values, seed=seed)
    return Estimate(mean(values), low, high, len(values))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """τ²-bench's pass^k of one task: the chance that ``k`` trials drawn without replacement from ``n``, of
    which ``c`` passed, all passed: C(c, k) / C(n, k). ``k`` must be in 1..n."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass^k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return math.comb(c, k) / math.comb(n, k)


def pass_hat_ks(outcomes: Sequence[Sequence[bool]], max_k: int) -> list[float | None]:
    """pass^k for k = 1..max_k averaged over tasks, each task given as its trials' outcomes (True: passed).
    A task joins the mean of k only when it has at least k trials; ``None`` where no task has."""
    result: list[float | None] = []
    for k in range(1, max_k + 1):
        scores = [pass_hat_k(len(t), sum(t), k) for t in outcomes if len(t) >= k]
        result.append(mean(scores) if scores else None)
    return result

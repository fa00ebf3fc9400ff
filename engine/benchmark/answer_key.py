"""KEY.md answer keys: recompute declared aggregates and compare them with the checks' answers."""

from __future__ import annotations

from engine.benchmark.model import Benchmark, Problem


def check_answer_key(bench: Benchmark) -> list[Problem]:
    """Problems found in ``bench.path / "KEY.md"`` (none when the file is absent)."""
    return []

"""``validate`` against the number of phases: validates generated benchmarks of 1,000 to 10,000 phases (the
shape of ``tests/test_validate_scale.py``: a sheet told, edited every tenth phase, asked every fiftieth) and
prints the time per thousand phases beside the goal (linear: the 10,000-phase time at most 1.5 × ten times the
1,000-phase one; it was minutes). Prints figures; not a test.

    .venv/bin/python bench/validate_scale.py [--phases 1000 4000 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_validate_scale import write_long_benchmark  # noqa: E402

from engine.benchmark.validate import validate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, nargs="+", default=[1000, 4000, 10000])
    args = parser.parse_args()
    seconds: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for phases in args.phases:
            folder = write_long_benchmark(Path(tmp) / f"b{phases}", phases)
            started = time.process_time()  # CPU time: the machine's other work does not count
            found = validate(folder)
            seconds[phases] = time.process_time() - started
            print(
                f"{phases:>6} phases: {seconds[phases]:6.2f} s CPU "
                f"({1000 * seconds[phases] / phases:.2f} s per 1,000 phases), {len(found.problems)} problems"
            )
    low, high = min(seconds), max(seconds)
    ratio = (seconds[high] / seconds[low]) / (high / low)
    verdict = "met" if ratio <= 1.5 else "MISSED"
    print(f"growth beyond linear from {low} to {high} phases: {ratio:.2f}× (goal ≤ 1.5×): {verdict}")


if __name__ == "__main__":
    main()

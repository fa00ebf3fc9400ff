"""Across repeats (issue 33): ``mmb-tui compare`` gives each check's flip rate with the memory class each of its
failures took, and for two configurations the smallest difference their repeats can tell apart."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest
from engine_helpers import make_config, play

from engine.comparison.compare import main_compare
from engine.comparison.flips import CheckFlips, detectable_difference, flip_rate

NOTEBOOK = "memory_agents:NotebookAgent"


@pytest.mark.parametrize(
    ("outcomes", "rate"),
    [
        ([True, True, True], 0.0),
        ([False, False], 0.0),
        ([True, False], 1.0),
        ([True, False, False], 2 / 3),
        ([True, True, False, False], 4 / 6),
        ([True, None, False], 1.0),  # a run that left the check out is in no pair
        ([True], None),
        ([None, None], None),
    ],
)
def test_the_flip_rate_is_the_share_of_pairs_of_repeats_that_disagree(
    outcomes: list[bool | None], rate: float | None
) -> None:
    found = flip_rate(outcomes)
    assert found == rate if rate is None else math.isclose(found or 0.0, rate)


def test_the_smallest_detectable_difference_grows_with_the_spread_and_shrinks_with_the_repeats() -> None:
    assert detectable_difference([5.0], [6.0, 7.0]) is None
    assert detectable_difference([5.0, 5.0], [6.0, 6.0]) == 0.0
    few = detectable_difference([4.0, 6.0], [5.0, 7.0]) or 0.0
    many = detectable_difference([4.0, 6.0] * 5, [5.0, 7.0] * 5) or 0.0
    wide = detectable_difference([2.0, 8.0], [5.0, 7.0]) or 0.0
    assert math.isclose(few, 2.8 * math.sqrt(2 / 2 + 2 / 2)) and many < few < wide


def test_a_check_failed_every_time_for_one_class_is_systematic() -> None:
    assert CheckFlips("3.1", 0, 3).flip_rate == 0.0 and CheckFlips("3.1", 2, 1).flip_rate == pytest.approx(
        2 / 3
    )


async def test_compare_names_flipping_checks_their_classes_and_the_noise_floor(tmp_path: Path) -> None:
    def run(plan: str) -> dict[str, str]:
        return {"benchmark": "memory_autopsy", "agent": NOTEBOOK, "model": f"scripted/agent?plan={plan}"}

    # x: the locker code's update skipped, kept, reverted; y: the bike never saved (no "save" plan), twice
    runs = {
        "x.r1": run("save,skip"),
        "x.r2": run("save"),
        "x.r3": run("save,revert"),
        "y.r1": run(""),
        "y.r2": run(""),
    }
    config = make_config(tmp_path, runs)
    for run_id in runs:
        await play(config, run_id)
    out = io.StringIO()
    assert main_compare(config, ["x", "y"], out=out) == 0
    text = out.getvalue()
    assert "across repeats (flip rate: the share of pairs of repeats that disagree on a check):" in text
    assert "x (3 runs): 1 of 4 checks flip" in text
    assert "3.1 flips 67%, failed 2: " in text and "never written 1" in text and "lost 1" in text
    assert "3.3" not in text.partition("x (3 runs)")[2].partition("\n")[0]  # saved every time: never failed
    assert "y (2 runs): 0 of 4 checks flip · 3.3 always fails: not decidable 2" in text
    assert (
        "x vs y: difference 0.83; the smallest these repeats can tell apart ≈ 2.33 points (within the noise)"
        in text
    )

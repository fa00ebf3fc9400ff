"""The statistics of repeats against values computed by hand: pass^k (τ²-bench) and the bootstrap interval."""

from __future__ import annotations

import pytest

from engine.comparison.stats import Estimate, bootstrap_ci, estimate, mean, pass_hat_k, pass_hat_ks


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (3, 2, 1, 2 / 3),  # C(2,1)/C(3,1)
        (3, 2, 2, 1 / 3),  # C(2,2)/C(3,2) = 1/3
        (3, 2, 3, 0.0),  # C(2,3) = 0
        (4, 3, 2, 0.5),  # C(3,2)/C(4,2) = 3/6
        (5, 5, 5, 1.0),
        (5, 0, 1, 0.0),
        (1, 1, 1, 1.0),
    ],
)
def test_pass_hat_k_is_c_choose_k_over_n_choose_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


def test_pass_hat_k_refuses_k_outside_one_to_n() -> None:
    for n, c, k in ((3, 1, 0), (3, 1, 4), (3, 4, 1)):
        with pytest.raises(ValueError):
            pass_hat_k(n, c, k)


def test_pass_hat_ks_average_over_tasks_and_skip_tasks_with_fewer_trials() -> None:
    # task A: right in 2 of 3; task B: 3 of 3; task C: 1 of 1 (only in the mean of k = 1)
    tasks = [[True, True, False], [True, True, True], [True]]
    got = pass_hat_ks(tasks, 4)
    assert got[0] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert got[1] == pytest.approx((1 / 3 + 1) / 2)
    assert got[2] == pytest.approx((0 + 1) / 2)
    assert got[3] is None  # no task has 4 trials


def test_bootstrap_of_equal_values_is_a_point() -> None:
    assert bootstrap_ci([4.0, 4.0, 4.0]) == (4.0, 4.0)
    assert bootstrap_ci([7.5]) == (7.5, 7.5)


def test_bootstrap_of_two_values_matches_its_exact_distribution() -> None:
    # resampled means of {0, 10}: 0 (p 1/4), 5 (1/2), 10 (1/4): the 2.5th percentile is 0, the 97.5th 10,
    # and the 30th and 70th are both 5
    assert bootstrap_ci([0.0, 10.0]) == (0.0, 10.0)
    assert bootstrap_ci([0.0, 10.0], confidence=0.4) == (5.0, 5.0)


def test_bootstrap_is_reproducible_and_inside_the_range_of_the_values() -> None:
    values = [2.0, 3.5, 8.0, 9.0, 6.5]
    low, high = bootstrap_ci(values)
    assert bootstrap_ci(values) == (low, high)  # a fixed seed
    assert min(values) <= low <= mean(values) <= high <= max(values)
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_estimate_labels_its_mean_and_interval() -> None:
    e = estimate([0.0, 10.0])
    assert e == Estimate(mean=5.0, low=0.0, high=10.0, n=2)
    assert e.label() == "5.00 [0.00, 10.00]"
    assert e.label(1) == "5.0 [0.0, 10.0]"

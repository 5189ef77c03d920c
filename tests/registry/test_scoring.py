"""The statistics, held to their properties with hypothesis and to worked examples."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.schema import Price
from registry.scoring import (
    Estimate,
    Usage,
    estimate,
    pass_at_k,
    per_task,
    priced,
    rank_groups,
    tied,
)

reward = st.one_of(st.none(), st.floats(min_value=0, max_value=1, allow_nan=False))
binary = st.one_of(st.none(), st.sampled_from([0.0, 1.0]))
task_names = st.text(alphabet="abcdefgh-", min_size=1, max_size=8)
tasks = st.dictionaries(
    task_names, st.lists(reward, min_size=1, max_size=6), min_size=1, max_size=30
)
binary_tasks = st.dictionaries(
    task_names, st.lists(binary, min_size=1, max_size=12), min_size=1, max_size=30
)


@given(tasks)
def test_the_interval_holds_the_mean_and_the_error_is_not_negative(
    rewards: dict[str, list[float | None]],
) -> None:
    est = estimate(rewards)
    flat = [r or 0.0 for trials in rewards.values() for r in trials]
    assert math.isclose(est.mean, sum(flat) / len(flat), abs_tol=1e-12)
    assert est.n_trials == len(flat)
    if est.stderr is None:
        assert est.n_tasks < 2
        return
    assert est.stderr >= 0
    assert est.low is not None and est.high is not None
    assert 0.0 <= est.low <= est.mean <= est.high <= 1.0


@given(tasks, st.randoms())
def test_the_estimate_does_not_depend_on_task_order(
    rewards: dict[str, list[float | None]], rnd: random.Random
) -> None:
    items = list(rewards.items())
    rnd.shuffle(items)
    a, b = estimate(rewards), estimate(dict(items))
    assert math.isclose(a.mean, b.mean, abs_tol=1e-12)
    assert (a.stderr is None) == (b.stderr is None)
    if a.stderr is not None and b.stderr is not None:
        assert math.isclose(a.stderr, b.stderr, rel_tol=1e-9, abs_tol=1e-12)


@given(st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=2, max_size=20))
def test_identical_tasks_have_no_spread(values: list[float]) -> None:
    same = {f"t{i}": [values[0]] for i in range(len(values))}
    assert estimate(same).stderr == pytest.approx(0.0, abs=1e-12)


def test_the_clustered_error_matches_a_worked_example() -> None:
    # Four tasks, one trial each: SE = sqrt(T/(T-1) * sum((x - m)^2)) / T = sample SD / sqrt(T).
    est = estimate({"a": [1.0], "b": [0.0], "c": [1.0], "d": [1.0]})
    assert est.mean == 0.75
    assert est.stderr == pytest.approx(math.sqrt(0.25 / 4))
    assert est.high == 1.0  # clipped to the reward range
    # Errored trials count 0.
    assert estimate({"a": [None, 1.0]}).mean == 0.5


@given(binary_tasks)
def test_pass_at_k_is_a_probability_that_grows_with_k(
    rewards: dict[str, list[float | None]],
) -> None:
    result = pass_at_k(rewards)
    fewest = min(len(v) for v in rewards.values())
    assert all(2 <= k <= fewest for k in result)
    assert 1 not in result
    values = [result[k] for k in sorted(result)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values)
    mean = estimate(rewards).mean
    assert all(v >= mean - 1e-12 for v in values) or len({len(t) for t in rewards.values()}) > 1


def test_pass_at_k_matches_harbor_on_a_known_job() -> None:
    # Harbor's demo job with -k 2: four tasks always pass, one never: pass@2 = 0.8.
    rewards = {t: [1.0, 1.0] for t in "abcd"} | {"e": [0.0, 0.0]}
    assert pass_at_k(rewards) == {2: 0.8}
    # One success in four trials: pass@2 = 1 - C(3,2)/C(4,2) = 0.5, pass@4 = 1.
    assert pass_at_k({"a": [1.0, 0.0, 0.0, 0.0]}) == {2: 0.5, 4: 1.0}
    assert pass_at_k({"a": [0.5, 1.0]}) == {}
    assert pass_at_k({"a": [1.0]}) == {}


estimates = st.builds(
    lambda mean, se, tasks: Estimate(mean, se, None, None, tasks, tasks),
    st.floats(min_value=0, max_value=1, allow_nan=False),
    st.one_of(st.none(), st.floats(min_value=0, max_value=0.3, allow_nan=False)),
    st.integers(min_value=1, max_value=100),
)


@given(st.dictionaries(st.text(min_size=1, max_size=5), estimates, min_size=1, max_size=20))
def test_rank_groups_are_monotone_and_follow_ties(board: dict[str, Estimate]) -> None:
    ranked = rank_groups(board)
    assert [key for key, _ in ranked] == sorted(board, key=lambda k: (-board[k].mean, k))
    groups = [group for _, group in ranked]
    assert groups[0] == 1
    for (above, upper), (below, lower) in itertools.pairwise(ranked):
        assert lower in (upper, upper + 1)
        assert (lower == upper) == tied(board[above], board[below])


@settings(max_examples=50)
@given(st.dictionaries(st.text(min_size=1, max_size=5), estimates, min_size=2, max_size=10))
def test_rank_groups_ignore_the_order_entries_arrive_in(board: dict[str, Estimate]) -> None:
    reversed_board = dict(reversed(list(board.items())))
    assert rank_groups(board) == rank_groups(reversed_board)


def test_clearly_different_scores_get_different_groups() -> None:
    board = {
        "best": Estimate(0.9, 0.01, None, None, 100, 100),
        "close": Estimate(0.89, 0.01, None, None, 100, 100),
        "far": Estimate(0.5, 0.01, None, None, 100, 100),
        "one-task": Estimate(0.1, None, None, None, 1, 1),
    }
    assert rank_groups(board) == [("best", 1), ("close", 1), ("far", 2), ("one-task", 2)]


PRICE = Price.model_validate(
    {"model": "m", "inputPerMtok": 3.0, "cachedInputPerMtok": 0.3, "outputPerMtok": 15.0,
     "source": "https://example.com/prices", "asOf": "2025-10-15"}
)  # fmt: skip


def test_cost_comes_from_the_job_first_then_the_price_table() -> None:
    reported = Usage(n_tasks=2, input_tokens=10, output_tokens=10, cost_usd=0.5)
    assert priced(reported, PRICE) == 0.5
    tokens = Usage(n_tasks=2, input_tokens=1_000_000, cached_tokens=400_000, output_tokens=100_000)
    assert priced(tokens, PRICE) == pytest.approx(0.6 * 3.0 + 0.4 * 0.3 + 0.1 * 15.0)
    assert priced(tokens, None) is None
    assert priced(Usage(n_tasks=2), PRICE) is None


def test_tokens_and_cost_per_task_average_over_runs_that_report_them() -> None:
    runs = [
        Usage(n_tasks=2, input_tokens=200, cached_tokens=0, output_tokens=20, cost_usd=1.0),
        Usage(n_tasks=3, input_tokens=None, output_tokens=None),
        Usage(n_tasks=2, input_tokens=600, cached_tokens=100, output_tokens=60, cost_usd=3.0),
    ]
    rates = per_task(runs, None)
    assert rates.input_tokens == 200
    assert rates.cached_tokens == 25
    assert rates.output_tokens == 20
    assert rates.cost_usd == 1.0
    assert per_task([Usage(n_tasks=1)], None).cost_usd is None

"""Scoring: the mean and pass@k as Harbor computes them, checked against the `pass_at_k`
Harbor writes in real runs, against Harbor's own functions, and by their properties."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest
from harbor.metrics.mean import Mean
from harbor.utils.pass_at_k import _eligible_k_values, _pass_at_k_for_task
from hypothesis import given
from hypothesis import strategies as st

from hbench.jobs.scoring import (
    Rewards,
    eligible_k,
    evals_key,
    mean_rewards,
    mean_score,
    pass_at_k,
    pass_at_k_for_task,
    primary_reward,
)

TASKS = st.sampled_from(["a", "b", "c", "d"])
BINARY = st.one_of(st.none(), st.sampled_from([{"reward": 0.0}, {"reward": 1.0}]))
REWARD_DICTS = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(["reward", "accuracy", "speed"]),
        st.floats(min_value=-10, max_value=10, allow_nan=False),
        max_size=3,
    ),
)


def trial_outcomes(job: Path) -> list[tuple[str, Rewards | None]]:
    """`(task name, rewards)` of every trial, straight from the trial result files."""
    outcomes = []
    for result_file in sorted(job.glob("*/result.json")):
        result = json.loads(result_file.read_text())
        verifier = result["verifier_result"]
        outcomes.append((result["task_name"], verifier["rewards"] if verifier else None))
    return outcomes


def harbors_pass_at_k(job: Path) -> dict[int, float]:
    (figures,) = json.loads((job / "result.json").read_text())["stats"]["evals"].values()
    return {int(k): v for k, v in figures["pass_at_k"].items()}


# Against real runs


@pytest.mark.harbor
def test_pass_at_k_equals_harbors_on_a_plain_run(oracle_job: Path) -> None:
    assert pass_at_k(trial_outcomes(oracle_job)) == harbors_pass_at_k(oracle_job) == {2: 0.8}


@pytest.mark.harbor
def test_pass_at_k_equals_harbors_with_errored_trials(errored_job: Path) -> None:
    outcomes = trial_outcomes(errored_job)
    assert sum(rewards is None for _, rewards in outcomes) == 5
    assert pass_at_k(outcomes) == harbors_pass_at_k(errored_job) == {2: 0.8}


@pytest.mark.harbor
def test_one_attempt_per_task_has_no_pass_at_k(nop_job: Path) -> None:
    assert pass_at_k(trial_outcomes(nop_job)) == harbors_pass_at_k(nop_job) == {}


# Examples


def test_primary_reward() -> None:
    assert primary_reward(None) is None and primary_reward({}) is None
    assert primary_reward({"reward": 1}) == 1.0
    assert primary_reward({"accuracy": 0.5}) == 0.5
    assert primary_reward({"accuracy": 0.5, "reward": 0.25}) == 0.25
    assert primary_reward({"accuracy": 0.5, "speed": 2.0}) is None


def test_mean_counts_trials_without_rewards_as_zero() -> None:
    # Harbor's own example: three trials, one reward of 1.0, two errors.
    assert mean_score([{"reward": 1.0}, None, None]) == pytest.approx(1 / 3)
    assert mean_rewards([{"reward": 1.0}, None, None]) == {"mean": pytest.approx(1 / 3)}
    assert mean_score([]) == 0.0 and mean_rewards([]) == {}


def test_several_reward_keys_are_averaged_per_key() -> None:
    rewards: list[Rewards | None] = [{"accuracy": 1.0, "speed": 0.5}, {"accuracy": 0.0}, None]
    assert mean_rewards(rewards) == {
        "accuracy": pytest.approx(1 / 3),
        "speed": pytest.approx(1 / 6),
    }


def test_pass_at_k_needs_plain_pass_or_fail_rewards() -> None:
    assert pass_at_k([("a", {"reward": 0.5}), ("a", {"reward": 1.0})]) == {}
    assert pass_at_k([("a", {"x": 1.0, "y": 1.0}), ("a", {"x": 1.0, "y": 1.0})]) == {}
    assert pass_at_k([("a", {}), ("a", {"reward": 1.0})]) == {}
    assert pass_at_k([("a", None), ("a", {"reward": 1.0})]) == {2: 1.0}
    assert pass_at_k([]) == {}


def test_k_values_harbor_reports() -> None:
    assert eligible_k(1) == [] and eligible_k(2) == [2] and eligible_k(5) == [2, 4, 5]
    assert eligible_k(16) == [2, 4, 5, 8, 10, 15, 16]


def test_evals_key_names_the_group_as_harbor_does() -> None:
    assert evals_key("oracle", None, "hbench-demo") == "oracle__hbench-demo"
    assert evals_key("nop", "claude-sonnet-4-5", "demo") == "nop__claude-sonnet-4-5__demo"
    assert evals_key("nop", None, None) == "nop__adhoc"


# Properties


@given(st.lists(REWARD_DICTS, min_size=1, max_size=12))
def test_mean_rewards_is_harbors_mean_metric(rewards: list[dict[str, float] | None]) -> None:
    assert mean_rewards(rewards) == pytest.approx(Mean().compute(rewards))


@given(st.lists(BINARY, min_size=1, max_size=12))
def test_mean_score_is_harbors_mean_for_one_reward_key(rewards: list[Rewards | None]) -> None:
    assert mean_score(rewards) == pytest.approx(Mean().compute(list(rewards))["mean"])


@given(st.integers(min_value=0, max_value=64))
def test_eligible_k_is_harbors(max_k: int) -> None:
    assert eligible_k(max_k) == _eligible_k_values(max_k)
    assert 1 not in eligible_k(max_k) and all(k <= max_k for k in eligible_k(max_k))


@given(st.data())
def test_pass_at_k_for_task_is_the_unbiased_estimator(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=1, max_value=40))
    c = data.draw(st.integers(min_value=0, max_value=n))
    k = data.draw(st.integers(min_value=1, max_value=n))
    exact = 1 - Fraction(comb(n - c, k), comb(n, k))
    assert pass_at_k_for_task(n, c, k) == _pass_at_k_for_task(n, c, k)
    assert pass_at_k_for_task(n, c, k) == pytest.approx(float(exact), abs=1e-12)


@given(st.lists(st.tuples(TASKS, BINARY), min_size=1, max_size=40))
def test_pass_at_k_properties(outcomes: list[tuple[str, Rewards | None]]) -> None:
    result = pass_at_k(outcomes)
    per_task: dict[str, list[bool]] = {}
    for task, rewards in outcomes:
        per_task.setdefault(task, []).append(primary_reward(rewards) == 1.0)
    fewest = min(len(v) for v in per_task.values())
    assert sorted(result) == eligible_k(fewest)
    assert all(0.0 <= value <= 1.0 for value in result.values())
    values = [result[k] for k in sorted(result)]
    assert values == sorted(values), "more attempts can't lower pass@k"
    if all(all(v) for v in per_task.values()):
        assert all(value == 1.0 for value in values)
    if not any(any(v) for v in per_task.values()):
        assert all(value == 0.0 for value in values)

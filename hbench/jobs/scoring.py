"""A job's score, computed the way Harbor 0.25 computes it (`reference/harbor.md` §7).

Pure functions over reward dicts. A trial with no rewards (it errored before
grading, or grading failed) is `None` here and counts as 0: the mean is
Σ reward / number of trials, errored ones included. pass@k is Harbor's
unbiased estimator, reported only when every trial is a plain pass or fail.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

Rewards = Mapping[str, float]
"""A trial's `verifier_result.rewards`: metric name -> value."""

PRIMARY_KEY = "reward"
"""The reward Harbor writes from `reward.txt`, and the one the Hub shows first."""


def primary_reward(rewards: Rewards | None) -> float | None:
    """The trial's headline reward: `rewards["reward"]`, or the only value there is.

    None when the trial has no rewards, or several without a `reward` key.
    """
    if not rewards:
        return None
    if PRIMARY_KEY in rewards:
        return float(rewards[PRIMARY_KEY])
    if len(rewards) == 1:
        return float(next(iter(rewards.values())))
    return None


def mean_score(rewards: Sequence[Rewards | None]) -> float:
    """The mean primary reward over all trials, a trial without one counting as 0.

    Equals Harbor's `mean` whenever trials carry one reward key, as `reward.txt`
    gives. 0.0 for no trials, since nothing was solved.
    """
    if not rewards:
        return 0.0
    return sum(primary_reward(r) or 0.0 for r in rewards) / len(rewards)


def mean_rewards(rewards: Sequence[Rewards | None]) -> dict[str, float]:
    """Harbor's `Mean` metric exactly (`aggregate_reward_dicts`), `{}` for no trials.

    With at most one distinct key across trials: `{"mean": …}`, a missing
    reward counting 0. With several keys: the mean of each key, a trial
    lacking the key counting 0.
    """
    if not rewards:
        return {}
    keys = sorted({key for r in rewards if r is not None for key in r})
    if len(keys) <= 1:
        values = [0.0 if r is None else float(next(iter(r.values()), 0.0)) for r in rewards]
        return {"mean": sum(values) / len(values)}
    return {
        key: sum(float((r or {}).get(key, 0.0)) for r in rewards) / len(rewards) for key in keys
    }


def pass_at_k(outcomes: Iterable[tuple[str, Rewards | None]]) -> dict[int, float]:
    """Harbor's pass@k over `(task name, rewards)` pairs of one agent, model and dataset group.

    Empty unless every trial has exactly one reward key with value 0 or 1 (no
    rewards count as a 0). Otherwise the unbiased estimator
    1 - C(n-c, k)/C(n, k), averaged over tasks, for each eligible k.
    """
    successes: dict[str, list[int]] = defaultdict(list)
    for task_name, rewards in outcomes:
        if rewards is None:
            successes[task_name].append(0)
            continue
        if len(rewards) != 1:
            return {}
        value = next(iter(rewards.values()))
        if value not in (0, 1):
            return {}
        successes[task_name].append(int(value))
    if not successes:
        return {}
    fewest = min(len(s) for s in successes.values())
    return {
        k: sum(pass_at_k_for_task(len(s), sum(s), k) for s in successes.values()) / len(successes)
        for k in eligible_k(fewest)
    }


def eligible_k(max_k: int) -> list[int]:
    """The k Harbor reports: powers of two from 2 and multiples of 5, up to `max_k`; never 1."""
    powers = [2**e for e in range(1, max_k.bit_length() + 1) if 2**e <= max_k]
    return sorted({*powers, *range(5, max_k + 1, 5)})


def pass_at_k_for_task(n: int, c: int, k: int) -> float:
    """The chance that k of a task's n trials, c of them passing, include a pass.

    Computed as Harbor does (a running product, not binomials), so the floats match.
    """
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(k):
        product *= (n - c - i) / (n - i)
    return 1.0 - product


def evals_key(agent_name: str, model_name: str | None, source: str | None) -> str:
    """Harbor's name for an agent, model and dataset group, the keys of `stats.evals`.

    `model_name` is the model without its provider; `source` is the dataset's
    name (or folder name), `adhoc` for tasks named on their own.
    """
    dataset = source or "adhoc"
    return f"{agent_name}__{model_name}__{dataset}" if model_name else f"{agent_name}__{dataset}"

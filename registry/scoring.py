"""Scoring an entry from per-task rewards: mean, clustered standard error, 95% interval,
pass@k, rank groups on a board, and tokens and cost per task.

The estimators are written out in `docs/registry.md` ("Scoring"). Rewards of errored
trials arrive as `None` and count 0, as in Harbor's own mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from registry.schema import Price

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""

TaskRewards = Mapping[str, Sequence[float | None]]
"""Task name to the rewards of its trials, pooled over an entry's runs."""


@dataclass(frozen=True)
class Estimate:
    """An entry's score: mean reward over trials and its uncertainty."""

    mean: float
    stderr: float | None  # None with fewer than two tasks: no spread to measure
    low: float | None
    high: float | None
    n_tasks: int
    n_trials: int


def pool(runs: Iterable[TaskRewards]) -> dict[str, list[float | None]]:
    """Join the per-task rewards of several runs of one entry."""
    pooled: dict[str, list[float | None]] = {}
    for run in runs:
        for task, rewards in run.items():
            pooled.setdefault(task, []).extend(rewards)
    return pooled


@dataclass(frozen=True)
class Tally:
    """Per-task sums of an entry's rewards: everything the estimators read, gathered in
    one pass (a board recompute tallies 10,000 runs, so the pass must be cheap)."""

    sums: list[float]
    counts: list[int]
    passed: list[int]
    binary: bool  # every reward 0 or 1 (errored trials count 0)
    in_unit: bool  # every reward within [0, 1]


def tally(task_rewards: TaskRewards) -> Tally:
    sums, counts, passed = [], [], []
    binary = in_unit = True
    for rewards in task_rewards.values():
        trials = list(rewards)
        ones = trials.count(1.0)
        if ones + trials.count(0.0) + trials.count(None) == len(trials):
            total = float(ones)
        else:
            # filter(None, …) drops errored trials and zeros alike: both add 0 to the sum.
            nonzero = list(filter(None, trials))
            total = math.fsum(nonzero)
            binary = False
            in_unit = in_unit and min(nonzero) >= 0.0 and max(nonzero) <= 1.0
        sums.append(total)
        counts.append(len(trials))
        passed.append(ones)
    return Tally(sums, counts, passed, binary, in_unit)


def estimate(task_rewards: TaskRewards | Tally) -> Estimate:
    """Mean reward over all trials, with a standard error clustered by task.

    The mean is a ratio Σ_t S_t / Σ_t n_t (S_t the sum of task t's rewards, n_t its
    trials). Its cluster-robust variance is T/(T-1) · Σ_t (S_t - mean·n_t)² / N², which
    treats tasks, not trials, as the independent draws: attempts of one task are
    correlated. The interval is mean ± 1.96·SE, clipped to [0, 1] when every reward is.
    """
    t = task_rewards if isinstance(task_rewards, Tally) else tally(task_rewards)
    n_trials = sum(t.counts)
    if n_trials == 0:
        raise ValueError("no trials to score")
    mean = math.fsum(t.sums) / n_trials
    n_tasks = sum(1 for n in t.counts if n > 0)
    if n_tasks < 2:
        return Estimate(mean, None, None, None, n_tasks, n_trials)
    residuals = math.fsum((s - mean * n) ** 2 for s, n in zip(t.sums, t.counts, strict=True))
    stderr = math.sqrt(n_tasks / (n_tasks - 1) * residuals) / n_trials
    low, high = mean - Z95 * stderr, mean + Z95 * stderr
    if t.in_unit:
        low, high = max(low, 0.0), min(high, 1.0)
    return Estimate(mean, stderr, min(low, mean), max(high, mean), n_tasks, n_trials)


def pass_at_k(task_rewards: TaskRewards | Tally) -> dict[int, float]:
    """Harbor's pass@k: the unbiased 1 - C(n-c, k)/C(n, k), averaged over tasks.

    Defined only when every reward is 0 or 1 (errored trials count 0), for k in
    {2, 4, 8, …} and {5, 10, 15, …} up to the fewest trials of any task; k = 1 is the mean.
    """
    t = task_rewards if isinstance(task_rewards, Tally) else tally(task_rewards)
    if not t.binary or not t.counts:
        return {}
    fewest = min(t.counts)
    ks = sorted({2**i for i in range(1, 31) if 2**i <= fewest} | set(range(5, fewest + 1, 5)))
    pairs = list(zip(t.counts, t.passed, strict=True))
    return {
        k: math.fsum(1.0 - math.comb(n - c, k) / math.comb(n, k) for n, c in pairs) / len(pairs)
        for k in ks
    }


def tied(upper: Estimate, lower: Estimate) -> bool:
    """Whether two scores are statistically tied: |Δ| ≤ 1.96·√(SE₁² + SE₂²).

    An estimate without a standard error (one task) is tied with everything.
    """
    if upper.stderr is None or lower.stderr is None:
        return True
    spread = Z95 * math.hypot(upper.stderr, lower.stderr)
    return abs(upper.mean - lower.mean) <= spread


def rank_groups(estimates: Mapping[str, Estimate]) -> list[tuple[str, int]]:
    """Entries best first, each with its rank group.

    Entries are sorted by mean (ties by key). The first is in group 1; each next entry
    shares the group of the one above when tied with it, and opens the next group
    otherwise. Groups are therefore consecutive integers that never decrease.
    """
    order = sorted(estimates, key=lambda key: (-estimates[key].mean, key))
    ranked: list[tuple[str, int]] = []
    for key in order:
        if not ranked:
            ranked.append((key, 1))
            continue
        above, group = ranked[-1]
        same = tied(estimates[above], estimates[key])
        ranked.append((key, group if same else group + 1))
    return ranked


@dataclass(frozen=True)
class Usage:
    """One run's token totals and reported cost; None where the job reported nothing."""

    n_tasks: int
    input_tokens: int | None = None  # cached tokens included, as Harbor counts them
    cached_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class PerTask:
    """Mean tokens and cost per task over the runs that reported them."""

    input_tokens: float | None
    cached_tokens: float | None
    output_tokens: float | None
    cost_usd: float | None


def priced(usage: Usage, price: Price | None) -> float | None:
    """The run's cost: as the job reported it, else from the price table, else unknown."""
    if usage.cost_usd is not None:
        return usage.cost_usd
    if price is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    cached = min(usage.cached_tokens or 0, usage.input_tokens)
    return (
        (usage.input_tokens - cached) * price.input_per_mtok
        + cached * price.cached_input_per_mtok
        + usage.output_tokens * price.output_per_mtok
    ) / 1_000_000


def per_task(usages: Sequence[Usage], price: Price | None) -> PerTask:
    """Tokens and cost per task, each averaged over the runs that have that figure."""
    costs = [(priced(u, price), u.n_tasks) for u in usages]
    return PerTask(
        input_tokens=_rate([(u.input_tokens, u.n_tasks) for u in usages]),
        cached_tokens=_rate([(u.cached_tokens, u.n_tasks) for u in usages]),
        output_tokens=_rate([(u.output_tokens, u.n_tasks) for u in usages]),
        cost_usd=_rate(costs),
    )


def _rate(pairs: Sequence[tuple[float | None, int]]) -> float | None:
    known = [(value, n) for value, n in pairs if value is not None and n > 0]
    if not known:
        return None
    return math.fsum(v for v, _ in known) / sum(n for _, n in known)

"""The job's `result.json` against its trials: every figure Harbor aggregates, recomputed.

Harbor writes the job's aggregates (counts, usage, each eval's rewards, errors, metrics and
pass@k) in its `result.json`; an edit there or of a trial after the job ended shows here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from hbench.errors import Problem
from hbench.jobs.agreement import MAX_NAMED, RERUN, close
from hbench.jobs.completeness import CANCELLED
from hbench.jobs.models import Job, Trial
from hbench.jobs.scoring import mean_rewards, pass_at_k


def stats_problems(job: Job) -> list[Problem]:
    """`job-result-mismatch` for each figure of the job's `result.json` its trials don't give.

    Checked once the job finished, when Harbor has recomputed the figures from every trial
    (`harbor/job.py`, `Job.run`); a running job's are live counts.
    """
    if not job.finished:
        return []
    reported, ended = job.reported, job.results
    differences = [
        *_count("n_completed_trials", reported.n_completed_trials, len(ended)),
        *_count("n_errored_trials", reported.n_errored_trials, sum(t.errored for t in ended)),
        *_count(
            "n_cancelled_trials",
            reported.n_cancelled_trials,
            sum(t.exception_type == CANCELLED for t in ended),
        ),
        *_usage_differences(job),
        *_evals_differences(job),
    ]
    return [
        Problem(
            "job-result-mismatch",
            f"the job's result.json says {field} is {said}, but its trials give {given}: the "
            f"file was edited, or trials were changed after the job ended. {RERUN}",
            str(job.path / "result.json"),
        )
        for field, said, given in differences
    ]


Difference = tuple[str, str, str]


def _count(field: str, said: int, given: int) -> list[Difference]:
    return [] if said == given else [(f"stats.{field}", str(said), str(given))]


def _usage_differences(job: Job) -> list[Difference]:
    reported = job.reported
    pairs: list[tuple[str, float | None, float | None]] = [
        ("n_input_tokens", reported.n_input_tokens, job.n_input_tokens),
        ("n_cache_tokens", reported.n_cache_tokens, job.n_cache_tokens),
        ("n_output_tokens", reported.n_output_tokens, job.n_output_tokens),
        ("cost_usd", reported.cost_usd, job.cost_usd),
    ]
    # A retried attempt's usage is subtracted again when it is replaced, which leaves 0
    # where no remaining trial reported any (`JobStats.remove_trial`).
    return [
        (f"stats.{field}", _text(said), _text(given))
        for field, said, given in pairs
        if not close(said, given) and not (given is None and said == 0)
    ]


def _evals_differences(job: Job) -> list[Difference]:
    groups: dict[str, list[Trial]] = defaultdict(list)
    for trial in job.results:
        groups[trial.evals_key or ""].append(trial)
    reported = job.reported.evals
    differences: list[Difference] = []
    for key in sorted(groups.keys() | reported.keys()):
        trials, said = groups.get(key, []), reported.get(key)
        if said is None:
            differences.append((f"stats.evals[{key}]", "absent", f"{len(trials)} trials"))
            continue
        if not trials:
            differences.append((f"stats.evals[{key}]", f"{said.n_trials} trials", "no trial"))
            continue
        at = f"stats.evals[{key}]"
        graded = [t for t in trials if t.rewards is not None]
        differences += _count_at(at, "n_trials", said.n_trials, len(graded))
        differences += _count_at(at, "n_errors", said.n_errors, sum(t.errored for t in trials))
        differences += _listing(f"{at}.reward_stats", said.reward_stats, _reward_stats(trials))
        differences += _listing(
            f"{at}.exception_stats", {"": said.exception_stats}, {"": _exceptions(trials)}
        )
        differences += _metric_differences(at, said.metrics, trials, job)
        recomputed = pass_at_k((t.task_name or "", t.rewards) for t in trials)
        if not _same_numbers(said.pass_at_k, recomputed):
            differences.append((f"{at}.pass_at_k", _text(said.pass_at_k), _text(recomputed)))
    return differences


def _count_at(at: str, field: str, said: int, given: int) -> list[Difference]:
    return [] if said == given else [(f"{at}.{field}", str(said), str(given))]


def _reward_stats(trials: Iterable[Trial]) -> dict[str, dict[str, list[str]]]:
    stats: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for trial in trials:
        for key, value in (trial.rewards or {}).items():
            stats[key][repr(float(value))].append(trial.trial_name)
    return stats


def _exceptions(trials: Iterable[Trial]) -> dict[str, list[str]]:
    stats: dict[str, list[str]] = defaultdict(list)
    for trial in trials:
        if trial.exception_type is not None:
            stats[trial.exception_type].append(trial.trial_name)
    return stats


def _listing(
    at: str,
    said: Mapping[str, Mapping[str, list[str]]],
    given: Mapping[str, Mapping[str, list[str]]],
) -> list[Difference]:
    """Which trials each value lists, compared as sets; a value listing none is no value
    (Harbor leaves an emptied list behind when it replaces a retried attempt)."""

    def sets(listing: Mapping[str, Mapping[str, list[str]]]) -> dict[tuple[str, str], set[str]]:
        return {
            (key, _value_key(value)): set(names)
            for key, values in listing.items()
            for value, names in values.items()
            if names
        }

    said_sets, given_sets = sets(said), sets(given)
    if said_sets == given_sets:
        return []
    wrong = sorted(
        said_sets.keys() ^ given_sets.keys()
        | {k for k in said_sets.keys() & given_sets.keys() if said_sets[k] != given_sets[k]}
    )
    named = [f"{key}={value}" if key else value for key, value in wrong[:MAX_NAMED]]
    return [(at, f"other trials for {', '.join(named)}", "what the trials' results record")]


def _value_key(value: str) -> str:
    """A reward value as text, spelled one way (`1`, `1.0` and `1.00` are one value)."""
    try:
        return repr(float(value))
    except ValueError:
        return value


def _metric_differences(
    at: str, metrics: Sequence[Mapping[str, object]], trials: list[Trial], job: Job
) -> list[Difference]:
    # Only Harbor's default metric is recomputed here: a dataset's own metrics (a script,
    # a sum) are the dataset's to compute.
    if job.config.metrics or len(metrics) != 1 or set(metrics[0]) != {"mean"}:
        return []
    said = metrics[0]["mean"]
    given = mean_rewards([t.rewards for t in trials]).get("mean")
    if isinstance(said, int | float) and close(float(said), given):
        return []
    return [(f"{at}.metrics[0].mean", _text(said), _text(given))]


def _same_numbers(a: Mapping[int, float], b: Mapping[int, float]) -> bool:
    return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in sorted(value.items())) + "}"
    return "none" if value is None else str(value)

"""Recomputing a board's rows from its published runs, its issued-run counts and the
registry: scores with intervals and rank groups, honest run counts, tokens and cost."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from hbench.errors import HbenchError
from registry.datarepo.models import (
    BoardRow,
    BoardRows,
    IssuedRuns,
    PublishedRun,
    RunRef,
    TokensPerTask,
)
from registry.evidence import common_levels
from registry.loader import Registry
from registry.placement import OpenBoard
from registry.schema import NO_MODEL, MetricScale, Price
from registry.scoring import (
    Estimate,
    Tally,
    Usage,
    estimate,
    pass_at_k,
    per_task,
    pool,
    rank_groups,
    tally,
)

DIGITS = 6
"""Scores and rates are rounded so a recompute with nothing new rewrites no file."""

OPEN_BOARD_METRIC = "mean_reward"


@dataclass(frozen=True)
class BoardHeader:
    """What a board's rows say about the board itself."""

    slug: str
    dataset: str
    benchmark: str | None
    model: str
    task_count: int
    metric: str
    metric_scale: MetricScale
    settings: dict[str, JsonValue]
    tasks_pinned: bool = False


def header_of(slug: str, registry: Registry, open_board: OpenBoard | None) -> BoardHeader:
    """The header of a named board (from the registry) or an open one (from its file)."""
    if open_board is not None:
        benchmark = registry.benchmarks.get(open_board.benchmark or "")
        return BoardHeader(
            slug, open_board.dataset, open_board.benchmark, open_board.model,
            len(open_board.tasks),
            benchmark.metric if benchmark else OPEN_BOARD_METRIC,
            benchmark.metric_scale if benchmark else "fraction",
            open_board.settings,
            bool(benchmark and benchmark.harbor.task_digests),
        )  # fmt: skip
    board = registry.boards.get(slug)
    benchmark = registry.benchmarks.get(board.benchmark) if board else None
    task_set = benchmark.task_set(board.task_set) if board and benchmark else None
    if board is None or benchmark is None or task_set is None or benchmark.harbor.dataset is None:
        raise HbenchError("datarepo-board-unknown", f"no board {slug!r} in the data repository")
    return BoardHeader(
        slug, benchmark.harbor.dataset, benchmark.slug, board.model, task_set.task_count,
        benchmark.metric, benchmark.metric_scale, board.settings,
        bool(benchmark.harbor.task_digests),
    )  # fmt: skip


def recompute(
    header: BoardHeader, runs: Sequence[PublishedRun], issued: IssuedRuns, price: Price | None
) -> BoardRows:
    """The board's rows: one per entry with a public run, best first."""
    public: dict[str, list[PublishedRun]] = {}
    for run in sorted(runs, key=lambda r: (r.published_at, r.id)):
        if run.status == "public":
            public.setdefault(run.entry.key, []).append(run)
    run_tallies = {run.id: tally(run.results) for group in public.values() for run in group}
    tallies = {key: _entry_tally(group, run_tallies) for key, group in public.items()}
    estimates = {key: estimate(t) for key, t in tallies.items()}
    scores = {run_id: _mean(t) for run_id, t in run_tallies.items()}
    rows = [
        _row(group, public[key], tallies[key], estimates[key], issued, price, scores)
        for key, group in rank_groups(estimates)
    ]
    return BoardRows(
        board=header.slug,
        dataset=header.dataset,
        benchmark=header.benchmark,
        model=header.model,
        task_count=header.task_count,
        metric=header.metric,
        metric_scale=header.metric_scale,
        settings=header.settings,
        rows=rows,
        runs_withdrawn=sum(1 for r in runs if r.status == "withdrawn"),
        runs_taken_down=sum(1 for r in runs if r.status == "taken_down"),
        tasks_pinned=header.tasks_pinned,
    )


def price_for(registry: Registry, model: str) -> Price | None:
    return None if model == NO_MODEL else registry.prices.for_model(model)


def _row(  # noqa: PLR0917 - a private helper; its call site names what each value is
    group: int,
    runs: list[PublishedRun],
    pooled: Tally,
    est: Estimate,
    issued: IssuedRuns,
    price: Price | None,
    scores: dict[str, float],
) -> BoardRow:
    entry = runs[0].entry
    usage = per_task([_usage(r) for r in runs], price)
    return BoardRow(
        rank_group=group,
        entry=entry.name,
        owner=entry.owner,
        agent=entry.settings.agent,
        options=entry.settings.options,
        prompt_template_digest=entry.settings.prompt_template_digest,
        extra_instruction_digests=entry.settings.extra_instruction_digests,
        settings_digest=entry.settings.digest(),
        score=_round(est.mean),
        stderr=_round(est.stderr),
        ci_low=_round(est.low),
        ci_high=_round(est.high),
        pass_at_k={str(k): round(v, DIGITS) for k, v in pass_at_k(pooled).items()},
        n_tasks=est.n_tasks,
        n_trials=est.n_trials,
        runs_public=len(runs),
        runs_issued=len(issued.entries.get(entry.key, [])),
        runs_issued_public=sum(1 for r in runs if r.issued),
        tokens_per_task=TokensPerTask(
            input=_round(usage.input_tokens),
            cached=_round(usage.cached_tokens),
            output=_round(usage.output_tokens),
        ),
        cost_per_task_usd=_round(usage.cost_usd),
        runs=[_run_ref(r, scores[r.id]) for r in runs],
        evidence=common_levels(r.levels() for r in runs),
    )


def _entry_tally(runs: list[PublishedRun], run_tallies: dict[str, Tally]) -> Tally:
    # Most entries have one run, whose tally is the entry's.
    return run_tallies[runs[0].id] if len(runs) == 1 else tally(pool(r.results for r in runs))


def _mean(t: Tally) -> float:
    return round(math.fsum(t.sums) / sum(t.counts), DIGITS)


def _usage(run: PublishedRun) -> Usage:
    u = run.usage
    return Usage(len(run.results), u.input_tokens, u.cached_tokens, u.output_tokens, u.cost_usd)


def _run_ref(run: PublishedRun, score: float) -> RunRef:
    return RunRef(
        id=run.id,
        issued=run.issued,
        score=score,
        agent_version=run.agent_version,
        published_at=run.published_at,
        provenance=run.provenance,
        evidence=run.levels(),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)

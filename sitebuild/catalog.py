"""The registry's pages, in the BenchHub skill document's shape: benchmarks (paper, dataset,
license, metric, known scores with their source type and link, the reproduced panel),
models, and the benchmark-by-model leaderboard that marks reproduced cells.

A score is *reproduced* when it comes from a public run on one of our boards or from a run
summary pushed to `POST /v1/runs` (as the runs API counts them, so `/v1/bench/reproduced`
and the site agree); the panels and cells say how many of each, since a pushed summary has
no job behind it. Known scores keep the source type the registry gives them
(`docs/registry.md`).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from registry.datarepo.models import PushedRun
from registry.export import commands
from registry.loader import Registry
from registry.schema import Benchmark, KnownScore, MetricScale, Model, Price
from sitebuild import page
from sitebuild.boards import board_json
from sitebuild.format import json_time, scaled
from sitebuild.page import Page
from sitebuild.source import BoardSource, SiteData


@dataclass(frozen=True)
class Reproduced:
    """Public runs of one benchmark, model and harness, on our boards or pushed (the skill
    document's `ReproducedAggregate`), scores on the benchmark's metric scale."""

    benchmark: str
    model: str
    harness: str
    scores: tuple[float, ...]
    last_run_at: datetime
    scale: MetricScale
    pushed: int = 0
    """How many of the scores are pushed summaries, which no job backs."""

    @property
    def median(self) -> float:
        return statistics.median(self.scores)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "benchmarkSlug": self.benchmark,
            "modelSlug": self.model,
            "harness": self.harness,
            "runCount": len(self.scores),
            "median": round(self.median, 6),
            "mean": round(self.mean, 6),
            "min": round(min(self.scores), 6),
            "max": round(max(self.scores), 6),
            "lastRunAt": json_time(self.last_run_at),
            "pushedCount": self.pushed,
        }


@dataclass(frozen=True)
class Cell:
    """One benchmark and one model on the leaderboard: our runs, and the best known score."""

    benchmark: Benchmark
    model: Model
    reproduced: tuple[Reproduced, ...]
    known: KnownScore | None

    @property
    def runs(self) -> int:
        return sum(len(r.scores) for r in self.reproduced)

    @property
    def pushed(self) -> int:
        return sum(r.pushed for r in self.reproduced)

    @property
    def median(self) -> float | None:
        scores = [s for r in self.reproduced for s in r.scores]
        return statistics.median(scores) if scores else None

    def to_json(self) -> dict[str, JsonValue]:
        counts: dict[str, JsonValue] = {
            "runCount": self.runs, "pushedCount": self.pushed, "median": self.median,
        }  # fmt: skip
        return {
            "benchmark": self.benchmark.slug,
            "model": self.model.slug,
            "reproduced": counts if self.runs else None,
            "known": self.known.to_json_dict() if self.known else None,
        }


def reproduced(site: SiteData) -> list[Reproduced]:
    """Every benchmark, model and harness with public runs: the boards' rows, and the
    pushed summaries (a model the registry doesn't know keeps the text pushed, as the runs
    API groups it)."""
    groups: dict[tuple[str, str, str], list[tuple[float, datetime, bool]]] = {}
    scales: dict[str, MetricScale] = {}
    for board in site.boards.values():
        benchmark = site.registry.benchmarks.get(board.header.benchmark or "")
        if benchmark is None or board.rows is None:
            continue
        scales[benchmark.slug] = benchmark.metric_scale
        for row in board.rows.rows:
            key = (benchmark.slug, board.header.model, row.agent)
            groups.setdefault(key, []).extend(
                (scaled(ref.score, benchmark.metric_scale), ref.published_at, False)
                for ref in row.runs
            )
    for run in site.pushed:
        benchmark = site.registry.benchmarks.get(run.benchmark)
        if benchmark is None or run.status != "public":  # a run taken down counts no more
            continue
        scales[benchmark.slug] = benchmark.metric_scale
        key = (benchmark.slug, run.model_slug or run.model, run.harness)
        groups.setdefault(key, []).append((pushed_score(run, benchmark), run.pushed_at, True))
    return [
        Reproduced(
            benchmark=b, model=m, harness=h, scores=tuple(s for s, _, _ in runs),
            last_run_at=max(at for _, at, _ in runs), scale=scales[b],
            pushed=sum(1 for *_, was_pushed in runs if was_pushed),
        )
        for (b, m, h), runs in sorted(groups.items())
    ]  # fmt: skip


def pushed_score(run: PushedRun, benchmark: Benchmark) -> float:
    """A pushed score on the benchmark's metric scale: pushes write percentages 0-100 (an
    Elo rating as it is), where a fraction-scaled benchmark's pages show 0-1."""
    return run.score / 100 if benchmark.metric_scale == "fraction" else run.score


def known_score_model(registry: Registry, known: KnownScore) -> str | None:
    """The registry model a known score names (its sources write the model as people do)."""
    return registry.model_slugs_by_name.get(known.model.strip().lower())


def catalog_pages(site: SiteData, exported: Mapping[str, str]) -> Iterator[Page]:
    """The benchmark and model pages, their indexes and the leaderboard.

    `exported` is the static registry (`registry.export.export_registry`), whose records
    are the JSON of the benchmark and model pages.
    """
    panel = reproduced(site)
    registry = site.registry
    benchmarks = sorted(registry.benchmarks.values(), key=lambda b: b.name.lower())
    models = sorted(registry.models.values(), key=lambda m: m.name.lower())
    yield _benchmarks_index(site, benchmarks, panel)
    for benchmark in benchmarks:
        yield _benchmark_page(site, benchmark, panel, exported)
    yield _models_index(site, models, panel)
    for model in models:
        yield _model_page(site, model, panel, exported)
    yield _leaderboard(site, benchmarks, models, panel)


@dataclass(frozen=True)
class IndexContext:
    """What `benchmarks.html` shows: the registry's benchmarks, and per benchmark's slug
    how many runs reproduced it and how many boards run it."""

    benchmarks: Sequence[Benchmark]
    runs: Mapping[str, int]
    boards: Mapping[str, int]


@dataclass(frozen=True)
class BenchmarkContext:
    """What `benchmark.html` shows: the benchmark, its reproduced panel, its boards, its
    known scores with the registry model each names, and the commands that run it."""

    benchmark: Benchmark
    reproduced: Sequence[Reproduced]
    boards: Sequence[BoardSource]
    known: Sequence[tuple[KnownScore, str | None]]
    registry: Registry
    commands: Sequence[str]


@dataclass(frozen=True)
class ModelsContext:
    """What `models.html` shows: the registry's models, and per model's slug how many runs
    reproduced a benchmark with it and how many boards run it."""

    models: Sequence[Model]
    runs: Mapping[str, int]
    boards: Mapping[str, int]


@dataclass(frozen=True)
class ModelContext:
    """What `model.html` shows: the model, its reproduced panel, its boards, the known
    scores that name it with their benchmark, and its price."""

    model: Model
    reproduced: Sequence[Reproduced]
    boards: Sequence[BoardSource]
    known: Sequence[tuple[Benchmark, KnownScore]]
    price: Price | None
    registry: Registry


@dataclass(frozen=True)
class LeaderboardContext:
    """What `leaderboard.html` shows: benchmarks by models, a cell for each pair."""

    benchmarks: Sequence[Benchmark]
    models: Sequence[Model]
    cells: Mapping[tuple[str, str], Cell]


def _boards_of(site: SiteData, *, benchmark: str = "", model: str = "") -> list[BoardSource]:
    return [
        b
        for b in site.boards.values()
        if (not benchmark or b.header.benchmark == benchmark)
        and (not model or b.header.model == model)
    ]


def _benchmarks_index(
    site: SiteData, benchmarks: Sequence[Benchmark], panel: Sequence[Reproduced]
) -> Page:
    runs = {b.slug: sum(len(r.scores) for r in panel if r.benchmark == b.slug) for b in benchmarks}
    boards = {b.slug: len(_boards_of(site, benchmark=b.slug)) for b in benchmarks}
    return Page(
        path=page.benchmarks(),
        template="benchmarks.html",
        title="Benchmarks",
        section="benchmarks",
        context=IndexContext(benchmarks, runs, boards),
        data={"benchmarks": [
            {"slug": b.slug, "name": b.name, "axes": list(b.axes),
             "harborStatus": b.harbor.status, "metric": b.metric,
             "knownScores": len(b.known_scores), "boards": boards[b.slug],
             "reproducedRuns": runs[b.slug]}
            for b in benchmarks
        ]},
    )  # fmt: skip


def _benchmark_page(
    site: SiteData,
    benchmark: Benchmark,
    panel: Sequence[Reproduced],
    exported: Mapping[str, str],
) -> Page:
    mine = [r for r in panel if r.benchmark == benchmark.slug]
    boards = _boards_of(site, benchmark=benchmark.slug)
    known = [(score, known_score_model(site.registry, score)) for score in benchmark.known_scores]
    return Page(
        path=page.benchmark(benchmark.slug),
        template="benchmark.html",
        title=benchmark.name,
        section="benchmarks",
        context=BenchmarkContext(benchmark, mine, boards, known, site.registry,
                                 commands(benchmark)),
        data={"benchmark": json.loads(exported[f"b/{benchmark.slug}.json"]),
              "reproduced": [r.to_json() for r in mine],
              "boards": [board_json(b) for b in boards]},
    )  # fmt: skip


def _models_index(site: SiteData, models: Sequence[Model], panel: Sequence[Reproduced]) -> Page:
    runs = {m.slug: sum(len(r.scores) for r in panel if r.model == m.slug) for m in models}
    boards = {m.slug: len(_boards_of(site, model=m.slug)) for m in models}
    return Page(
        path=page.models(),
        template="models.html",
        title="Models",
        section="models",
        context=ModelsContext(models, runs, boards),
        data={"models": [
            {"slug": m.slug, "name": m.name, "provider": m.provider, "boards": boards[m.slug],
             "reproducedRuns": runs[m.slug]}
            for m in models
        ]},
    )  # fmt: skip


def _model_page(
    site: SiteData, model: Model, panel: Sequence[Reproduced], exported: Mapping[str, str]
) -> Page:
    registry = site.registry
    mine = [r for r in panel if r.model == model.slug]
    boards = _boards_of(site, model=model.slug)
    known = [
        (benchmark, score)
        for benchmark in sorted(registry.benchmarks.values(), key=lambda b: b.name.lower())
        for score in benchmark.known_scores
        if known_score_model(registry, score) == model.slug
    ]
    return Page(
        path=page.model(model.slug),
        template="model.html",
        title=model.name,
        section="models",
        context=ModelContext(model, mine, boards, known, registry.prices.for_model(model.slug),
                             registry),
        data={"model": json.loads(exported[f"m/{model.slug}.json"]),
              "reproduced": [r.to_json() for r in mine],
              "boards": [board_json(b) for b in boards]},
    )  # fmt: skip


def _leaderboard(
    site: SiteData,
    benchmarks: Sequence[Benchmark],
    models: Sequence[Model],
    panel: Sequence[Reproduced],
) -> Page:
    cells = {
        (b.slug, m.slug): Cell(
            benchmark=b,
            model=m,
            reproduced=tuple(r for r in panel if r.benchmark == b.slug and r.model == m.slug),
            known=_best_known(site.registry, b, m),
        )
        for b in benchmarks
        for m in models
    }
    return Page(
        path=page.leaderboard(),
        template="leaderboard.html",
        title="Leaderboard: benchmarks by model",
        section="leaderboard",
        context=LeaderboardContext(benchmarks, models, cells),
        data={
            "benchmarks": [b.slug for b in benchmarks],
            "models": [m.slug for m in models],
            "cells": [c.to_json() for c in cells.values() if c.runs or c.known],
        },
    )


def _best_known(registry: Registry, benchmark: Benchmark, model: Model) -> KnownScore | None:
    scores = [s for s in benchmark.known_scores if known_score_model(registry, s) == model.slug]
    return max(scores, key=lambda s: s.value, default=None)

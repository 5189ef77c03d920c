"""The pushed runs' pages: every run summary pushed to `POST /v1/runs`, newest first, a
page for each, and `runs/detail/`, which sends the skill document's `?id=` address on to
the run's page.

A pushed run has no job behind it: the service checked the summary's form and the names it
uses, and nothing else, so every one of these pages says so beside the score.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from registry.datarepo.models import PushedRun
from registry.loader import Registry
from registry.schema import Benchmark
from sitebuild import page
from sitebuild.page import Page
from sitebuild.source import SiteData

PROVES = (
    "A score summary pushed to the runs API. The service checked its form and the names it "
    "uses; no job backs it, so it proves nothing about the score."
)
"""What a pushed run proves, as its pages say it (the runs API's own words for it)."""


@dataclass(frozen=True)
class PushedRunsContext:
    """What `pushed_runs.html` shows: the pushed runs, newest first, and what they prove."""

    runs: Sequence[PushedRun]
    registry: Registry
    proves: str


@dataclass(frozen=True)
class PushedRunContext:
    """What `pushed_run.html` shows: the run, its benchmark (None if the registry has no
    such benchmark any more) and what it proves."""

    run: PushedRun
    benchmark: Benchmark | None
    registry: Registry
    proves: str


def runs_pages(site: SiteData) -> Iterator[Page]:
    """The list, one page per pushed run, and the `?id=` forwarder."""
    every = sorted(site.pushed, key=lambda r: (r.pushed_at, r.id), reverse=True)
    newest = [r for r in every if r.status == "public"]  # taken-down runs keep their page
    yield Page(
        path=page.pushed_runs(),
        template="pushed_runs.html",
        title="Pushed runs",
        section="runs",
        context=PushedRunsContext(newest, site.registry, PROVES),
        data={"runs": [_summary(r) for r in newest], "proves": PROVES},
    )
    for run in every:
        yield pushed_run_page(site, run)
    yield Page(
        path=page.run_detail(),
        template="run_detail.html",
        title="Find a pushed run",
        section="runs",
        data={"runs": [r.id for r in every]},
    )


def pushed_run_page(site: SiteData, run: PushedRun) -> Page:
    benchmark = site.registry.benchmarks.get(run.benchmark)
    return Page(
        path=page.pushed_run(run.id),
        template="pushed_run.html",
        title=f"Pushed run {run.id}",
        section="runs",
        context=PushedRunContext(run, benchmark, site.registry, PROVES),
        data={**run.to_json_dict(), "proves": PROVES},
    )


def _summary(run: PushedRun) -> dict[str, JsonValue]:
    return {
        "id": run.id,
        "benchmark": run.benchmark,
        "model": run.model,
        "modelSlug": run.model_slug,
        "harness": run.harness,
        "score": run.score,
        "metric": run.metric,
        "taskCount": run.task_count,
        "pushedAt": run.to_json_dict()["pushedAt"],
    }

"""A page of the site and where each kind of page lives.

Every page is an HTML file with its JSON beside it (`boards/<slug>/index.html` and
`boards/<slug>/index.json`). Paths are relative to the site's root and links between pages
are made relative to the linking page, since Pages serves the site under a sub-path.
Links name `index.html` explicitly, so a site opened from disk browses the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue


@dataclass(frozen=True)
class Page:
    """One page to render: its file, its template and context, and the JSON beside it.

    `context` is what the page shows: a dataclass of the page's own type, which its renderer
    reads by attribute (a Jinja template by the fields' names).

        `json_text` is for JSON that already exists (a run's record, its bytes), written as is;
        otherwise `data` is serialised. `json_source` names the data repository's file that
        holds those bytes, which a build may link rather than write.
    """

    path: str
    template: str
    title: str
    section: str
    context: object = None
    data: JsonValue = None
    json_text: bytes | None = None
    json_source: str | None = None

    @property
    def json_path(self) -> str:
        return self.path.removesuffix(".html") + ".json"

    @property
    def json_name(self) -> str:
        """The JSON file's name, as the page links it."""
        return self.json_path.rsplit("/", 1)[-1]

    @property
    def root(self) -> str:
        """The relative path from this page to the site's root."""
        return "../" * self.path.count("/")


def home() -> str:
    return "index.html"


def board(slug: str) -> str:
    return f"boards/{slug}/index.html"


def entry(board_slug: str, name: str) -> str:
    return f"boards/{board_slug}/entries/{name}.html"


def run(board_slug: str, run_id: str) -> str:
    """A run's page; its JSON beside it is the run's record, at the data repository's path."""
    return f"boards/{board_slug}/runs/{run_id}.html"


def benchmarks() -> str:
    return "benchmarks/index.html"


def benchmark(slug: str) -> str:
    return f"benchmarks/{slug}/index.html"


def models() -> str:
    return "models/index.html"


def model(slug: str) -> str:
    return f"models/{slug}/index.html"


def leaderboard() -> str:
    return "leaderboard/index.html"


def audit() -> str:
    return "audit/index.html"


def audit_month(month: str) -> str:
    return f"audit/{month}.html"


def limits() -> str:
    return "limits/index.html"


def pushed_runs() -> str:
    """Every run summary pushed to `POST /v1/runs`."""
    return "runs/index.html"


def pushed_run(run_id: str) -> str:
    """A pushed run's page; its JSON beside it is the run's record."""
    return f"runs/{run_id}.html"


def run_detail() -> str:
    """`runs/detail/?id=<id>`: the address the BenchHub skill document gives a run, which
    the site's script sends on to the run's own page."""
    return "runs/detail/index.html"


def take_part() -> str:
    return "take-part/index.html"


REGISTRY_DIR = "registry"
"""The static registry export (`index.json`, `b/<slug>.json`, `m/<slug>.json`) inside the
site, so `hbench registry search --registry https://<site>/registry/` reads it."""

STATIC_DIR = "static"

PATHS: Mapping[str, object] = {
    "home_url": home,
    "board_url": board,
    "entry_url": entry,
    "run_url": run,
    "benchmarks_url": benchmarks,
    "benchmark_url": benchmark,
    "models_url": models,
    "model_url": model,
    "leaderboard_url": leaderboard,
    "audit_url": audit,
    "audit_month_url": audit_month,
    "limits_url": limits,
    "take_part_url": take_part,
    "pushed_runs_url": pushed_runs,
    "pushed_run_url": pushed_run,
    "run_detail_url": run_detail,
}
"""The path functions, as the templates call them."""

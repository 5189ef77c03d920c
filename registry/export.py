"""The static registry: `index.json`, `b/<slug>.json` per benchmark and `m/<slug>.json` per
model, in the shape of the BenchHub skill document (`harbor.status`,
`harbor.adapter.kind`, `license.allowsRedistribution`, `metric`, `metricScale`, known
scores with their source type and link). The shapes are the pydantic models below;
`validate_export` holds a folder of files to them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import Field, ValidationError

from hbench.errors import Problem
from registry.demo import BUNDLED_REGISTRY, DATASET_REF, LAY_OUT_COMMAND
from registry.jsonfile import dumps
from registry.loader import Registry
from registry.schema import (
    AdapterKind,
    Benchmark,
    BenchmarkSlug,
    HarborStatus,
    MetricScale,
    Model,
    Price,
    Record,
    Slug,
)

EXPORT_VERSION = 1


class BoardSummary(Record):
    """A named board as the static registry lists it."""

    slug: Slug
    benchmark: BenchmarkSlug
    task_set: str
    task_count: int
    model: Slug
    attempts: list[int]


class IndexHarbor(Record):
    status: HarborStatus
    dataset: str | None
    adapter_kind: AdapterKind | None


class IndexLicense(Record):
    spdx: str | None
    allows_redistribution: bool


class IndexEntry(Record):
    """One benchmark in `index.json`: enough to search and filter."""

    slug: BenchmarkSlug
    name: str
    description: str
    axes: list[str]
    harbor: IndexHarbor
    license: IndexLicense
    metric: str
    metric_scale: MetricScale
    task_count: int
    known_scores: int
    boards: list[Slug]


class IndexModel(Record):
    slug: Slug
    name: str
    provider: str


class Index(Record):
    """`index.json`."""

    version: int = EXPORT_VERSION
    benchmarks: list[IndexEntry]
    models: list[IndexModel]
    boards: list[BoardSummary]


class BenchmarkRecord(Benchmark):
    """`b/<slug>.json`: the registry's benchmark record, its boards and how to run it."""

    boards: list[BoardSummary] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)


class ModelRecord(Model):
    """`m/<slug>.json`: the model, its boards and its price."""

    boards: list[BoardSummary] = Field(default_factory=list)
    price: Price | None = None


def export_registry(registry: Registry) -> dict[str, str]:
    """The static registry as relative path to file text."""
    boards = [_board_summary(registry, slug) for slug in sorted(registry.boards)]
    files = {}
    for slug in sorted(registry.benchmarks):
        benchmark = registry.benchmarks[slug]
        mine = [b for b in boards if b.benchmark == slug]
        record = BenchmarkRecord(
            **benchmark.model_dump(), boards=mine, commands=commands(benchmark)
        )
        files[f"b/{slug}.json"] = dumps(record.to_json_dict())
    for slug in sorted(registry.models):
        model = registry.models[slug]
        mine = [b for b in boards if b.model == slug]
        price = registry.prices.for_model(slug)
        files[f"m/{slug}.json"] = dumps(
            ModelRecord(**model.model_dump(), boards=mine, price=price).to_json_dict()
        )
    index = Index(
        benchmarks=[_index_entry(b, boards) for _, b in sorted(registry.benchmarks.items())],
        models=[IndexModel(slug=s, name=m.name, provider=m.provider) for s, m in _models(registry)],
        boards=boards,
    )
    files["index.json"] = dumps(index.to_json_dict())
    return files


def commands(benchmark: Benchmark) -> list[str]:
    """The commands that run the benchmark, in order, each as it runs from one folder; none
    when Harbor can't. The bundled demo dataset is written out first (`LAY_OUT_COMMAND`)."""
    dataset = benchmark.harbor.dataset
    adapter = benchmark.harbor.adapter
    if adapter is not None and adapter.kind == "hf_rows":
        slug = benchmark.slug
        oracle = [f"hbench registry run {slug} -a oracle"] if _solutions(benchmark) else []
        return [
            f"hbench registry pull {slug}",
            *oracle,
            f"hbench registry run {slug} -a <agent> -m <model>",
        ]
    if dataset is None:
        return []
    first: list[str] = []
    source = ""
    if dataset == DATASET_REF:
        first = [LAY_OUT_COMMAND]
        source = f" --registry-path {BUNDLED_REGISTRY}"
    elif benchmark.harbor.registry_url:
        source = f" --registry-url {benchmark.harbor.registry_url}"
    if benchmark.custom_environments:
        env = benchmark.custom_environments[0]
        return [
            *first,
            f"harbor run -d {dataset}{source} -a oracle",
            f"harbor run -d {dataset}{source} -a oracle --env {env}",
        ]
    return [
        *first,
        f"harbor run -d {dataset}{source} -a oracle",
        f"harbor run -d {dataset}{source} -a <agent> -m <model>",
    ]


def _solutions(benchmark: Benchmark) -> bool:
    """Whether pulled tasks hold the oracle's solutions: only when the licence allows it."""
    return benchmark.license.allows_redistribution


def validate_export(files: Mapping[str, str]) -> list[Problem]:
    """Every file of a static registry that does not match its documented shape."""
    problems = []
    if "index.json" not in files:
        problems.append(Problem("registry-export-invalid", "index.json is missing", "index.json"))
    for path, text in sorted(files.items()):
        shape = _shape_of(path)
        if shape is None:
            message = f"{path} is not a file of the static registry"
            problems.append(Problem("registry-export-invalid", message, path))
            continue
        try:
            record = shape.model_validate(json.loads(text))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            problems.append(Problem("registry-export-invalid", f"{path}: {first}", path))
            continue
        slug = getattr(record, "slug", None)
        if slug is not None and path != f"{path[0]}/{slug}.json":
            problems.append(Problem("registry-export-invalid", f"{path} holds {slug}", path))
    return problems


def _shape_of(path: str) -> type[Record] | None:
    if path == "index.json":
        return Index
    if path.startswith("b/") and path.endswith(".json") and path.count("/") == 1:
        return BenchmarkRecord
    if path.startswith("m/") and path.endswith(".json") and path.count("/") == 1:
        return ModelRecord
    return None


def _board_summary(registry: Registry, slug: str) -> BoardSummary:
    board = registry.boards[slug]
    benchmark = registry.benchmarks.get(board.benchmark)
    task_set = benchmark.task_set(board.task_set) if benchmark else None
    return BoardSummary(
        slug=slug,
        benchmark=board.benchmark,
        task_set=board.task_set,
        task_count=task_set.task_count if task_set else 0,
        model=board.model,
        attempts=list(board.attempts),
    )


def _index_entry(benchmark: Benchmark, boards: list[BoardSummary]) -> IndexEntry:
    adapter = benchmark.harbor.adapter
    return IndexEntry(
        slug=benchmark.slug,
        name=benchmark.name,
        description=benchmark.description,
        axes=benchmark.axes,
        harbor=IndexHarbor(
            status=benchmark.harbor.status,
            dataset=benchmark.harbor.dataset,
            adapter_kind=adapter.kind if adapter else None,
        ),
        license=IndexLicense(
            spdx=benchmark.license.spdx,
            allows_redistribution=benchmark.license.allows_redistribution,
        ),
        metric=benchmark.metric,
        metric_scale=benchmark.metric_scale,
        task_count=benchmark.full.task_count,
        known_scores=len(benchmark.known_scores),
        boards=[b.slug for b in boards if b.benchmark == benchmark.slug],
    )


def _models(registry: Registry) -> list[tuple[str, Model]]:
    return sorted(registry.models.items())

"""Reading a registry folder: `benchmarks/<slug>.json`, `models/<slug>.json`,
`boards/<slug>.json` and `prices.json` (see `docs/registry.md`).

Parsing works on a mapping of relative path to file text, so the same code reads a
folder on disk, the `registry/` folder of a data repository held in memory, or the
package's default data. It returns every problem it finds instead of stopping at the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ValidationError

from hbench.errors import HbenchError, Problem
from registry.schema import Benchmark, Board, Model, PriceTable

DEFAULT_DIR = Path(__file__).parent / "data"
"""The registry a new deployment starts with."""

KINDS = ("benchmarks", "models", "boards")
PRICES = "prices.json"


@dataclass(frozen=True)
class Registry:
    """A parsed registry, keyed by slug."""

    benchmarks: dict[str, Benchmark] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    boards: dict[str, Board] = field(default_factory=dict)
    prices: PriceTable = field(default_factory=PriceTable)

    def benchmarks_for_dataset(self, dataset: str) -> list[Benchmark]:
        """The benchmarks whose Harbor dataset is `dataset` (`name@version`)."""
        return [b for b in self.benchmarks.values() if b.harbor.dataset == dataset]

    @cached_property
    def model_slugs_by_name(self) -> dict[str, str]:
        """Each name people write a model by, lower-cased (its slug, its name, its Harbor
        names with and without their provider), to its slug; the first model naming it
        wins. Worked out once per registry: the site looks up every known score."""
        slugs: dict[str, str] = {}
        for model in self.models.values():
            harbor = [name.lower() for name in model.harbor_names]
            for name in (model.slug, model.name.lower(), *harbor,
                         *(n.rsplit("/", 1)[-1] for n in harbor)):  # fmt: skip
                slugs.setdefault(name, model.slug)
        return slugs

    def model_named(self, harbor_name: str | None) -> Model | None:
        """The model Harbor records as `harbor_name`; no model means the `none` model."""
        if harbor_name is None:
            return next((m for m in self.models.values() if not m.harbor_names), None)
        wanted = harbor_name.lower()
        for model in self.models.values():
            if any(name.lower() == wanted for name in model.harbor_names):
                return model
        return None


def read_folder(root: Path) -> dict[str, str]:
    """Every registry file under `root`, as relative POSIX path to text."""
    if not root.is_dir():
        raise HbenchError("registry-not-found", f"{root} is not a folder")
    files: dict[str, str] = {}
    for kind in KINDS:
        for path in sorted((root / kind).glob("*.json")):
            files[f"{kind}/{path.name}"] = path.read_text(encoding="utf-8")
    if (root / PRICES).is_file():
        files[PRICES] = (root / PRICES).read_text(encoding="utf-8")
    return files


def parse_registry(files: Mapping[str, str]) -> tuple[Registry, list[Problem]]:
    """Parse registry files; invalid files are left out and reported."""
    problems: list[Problem] = []
    benchmarks = _parse_kind(files, "benchmarks", Benchmark, problems)
    models = _parse_kind(files, "models", Model, problems)
    boards = _parse_kind(files, "boards", Board, problems)
    prices = PriceTable()
    if PRICES in files:
        parsed = _parse_one(PRICES, files[PRICES], PriceTable, problems)
        prices = parsed if parsed is not None else prices
    registry = Registry(
        benchmarks={b.slug: b for b in benchmarks},
        models={m.slug: m for m in models},
        boards={b.slug: b for b in boards},
        prices=prices,
    )
    return registry, problems


def load_registry(root: Path | None = None) -> Registry:
    """Load and parse a registry folder (the default one without an argument).

    Raises an HbenchError listing every file that does not parse; cross-reference
    problems are `registry.check`'s business.
    """
    registry, problems = parse_registry(read_folder(root or DEFAULT_DIR))
    if problems:
        raise HbenchError.from_problems(problems)
    return registry


def _parse_kind[RecordT: BaseModel](
    files: Mapping[str, str], kind: str, model: type[RecordT], problems: list[Problem]
) -> list[RecordT]:
    parsed: list[RecordT] = []
    for path in _paths_of(files, kind):
        record = _parse_one(path, files[path], model, problems)
        if record is not None:
            parsed.append(record)
    return parsed


def _paths_of(files: Iterable[str], kind: str) -> list[str]:
    return sorted(p for p in files if PurePosixPath(p).parent.as_posix() == kind)


def _parse_one[RecordT: BaseModel](
    path: str, text: str, model: type[RecordT], problems: list[Problem]
) -> RecordT | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem("registry-json-invalid", f"{path}: {exc}", path))
        return None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "(file)"
            problems.append(
                Problem("registry-schema-invalid", f"{path}: {where}: {error['msg']}", path)
            )
        return None

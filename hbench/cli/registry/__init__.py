"""`hbench registry …`: search the registry, show a benchmark, pull it as Harbor tasks and
run it (`hbench.cli.registry.pull`), check a registry folder, pin a benchmark's task digests
from a dataset checkout, and write out the bundled demo dataset.

`search` and `info` read a static registry (`index.json`, `b/<slug>.json`): the bundled
default registry, a local folder (a static export, or a registry source folder, which is
exported on the fly), or a published site's URL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from hbench.atomic import atomic_writer
from hbench.cli.main import PLAIN, Listing
from hbench.cli.output import console, handled, print_problems
from hbench.cli.registry.pull import pull, run
from hbench.errors import HbenchError
from hbench.jobs.task_digest import dataset_digests
from registry import demo
from registry.check import check_folder, datasets_from_harbor_registry
from registry.export import BenchmarkRecord
from registry.pins import pinned
from registry.search import search as search_index
from registry.static import StaticRegistry

app = typer.Typer(
    help="Search, pull and run the registry's benchmarks, and check registry folders.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN,
    cls=Listing,
)

RegistryOption = Annotated[
    str | None,
    typer.Option(
        "--registry",
        help="A registry folder or a published site's URL (default: the bundled registry).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@app.command()
def search(
    query: Annotated[str | None, typer.Argument(help="Words to look for.")] = None,
    *,
    axis: Annotated[str | None, typer.Option(help="Only benchmarks of this axis.")] = None,
    harbor_only: Annotated[
        bool, typer.Option("--harbor-only", help="Only benchmarks Harbor can run.")
    ] = False,
    limit: Annotated[int | None, typer.Option(help="At most this many.", min=1)] = None,
    as_json: JsonOption = False,
    registry: RegistryOption = None,
) -> None:
    """Find benchmarks by name, axis or dataset."""
    with handled():
        index = StaticRegistry(registry).index()
        found = search_index(index, query, axis=axis, harbor_only=harbor_only, limit=limit)
    if as_json:
        typer.echo(json.dumps([e.to_json_dict() for e in found], indent=2, sort_keys=True))
        return
    for entry in found:
        dataset = entry.harbor.dataset or "-"
        typer.echo(
            f"{entry.slug}\t{entry.name}\t{entry.harbor.status}\t{dataset}\t"
            f"{entry.metric}\t{entry.task_count} tasks"
        )
    if not found:
        typer.echo("no benchmark matches")


@app.command()
def info(
    slug: Annotated[str, typer.Argument(help="The benchmark's slug, such as humanevalfix.")],
    as_json: JsonOption = False,
    registry: RegistryOption = None,
) -> None:
    """Show one benchmark: Harbor status, license, metric, known scores, boards, commands."""
    with handled():
        text = StaticRegistry(registry).read(f"b/{slug}.json")
        if text is None:
            message = f"no benchmark {slug!r} in the registry; try `hbench registry search`"
            raise HbenchError("registry-benchmark-not-found", message)
        record = BenchmarkRecord.model_validate_json(text)
    if as_json:
        typer.echo(json.dumps(record.to_json_dict(), indent=2, sort_keys=True))
        return
    _print_record(record)


@app.command()
def check(
    directory: Annotated[Path, typer.Argument(help="The registry folder to check.")],
    harbor_registry: Annotated[
        list[Path] | None,
        typer.Option(
            "--harbor-registry",
            help="A Harbor registry.json whose datasets' task names the check may compare.",
        ),
    ] = None,
) -> None:
    """Check a registry folder; print each problem with its rule code."""
    with handled():
        datasets: dict[str, list[str]] = {}
        for path in harbor_registry or []:
            datasets.update(datasets_from_harbor_registry(path.read_text(encoding="utf-8")))
        problems = check_folder(directory, datasets)
    if problems:
        print_problems(problems)
        raise typer.Exit(code=1)
    console.print(f"[green]✓[/green] {escape(str(directory))}: no problems")


@app.command()
def pin(
    slug: Annotated[str, typer.Argument(help="The benchmark to pin, such as hbench-demo.")],
    tasks: Annotated[
        Path,
        typer.Option("--tasks", help="The dataset's folder of task folders, at its version."),
    ],
    registry: Annotated[
        Path,
        typer.Option("--registry", help="The registry folder holding benchmarks/<slug>.json."),
    ],
    pinned_from: Annotated[
        str,
        typer.Option(
            "--from", help="What the tasks are: the dataset checkout and its revision, in words."
        ),
    ],
) -> None:
    """Pin a benchmark's task digests, computed as Harbor computes them, into a registry folder.

    A board of the benchmark then takes only jobs whose lock.json records exactly these
    digests (task-digest-mismatch otherwise). Needs Harbor (pip install 'hbench[harbor]').
    """
    with handled():
        target = registry / "benchmarks" / f"{slug}.json"
        if not target.is_file():
            raise HbenchError("registry-not-found", f"{registry} has no benchmarks/{slug}.json")
        digests = dataset_digests(tasks)
        text = pinned(target.read_text(encoding="utf-8"), digests, pinned_from)
        with atomic_writer(target) as stream:
            stream.write(text.encode())
    console.print(f"[green]✓[/green] pinned {len(digests)} task digests in {escape(str(target))}")


@app.command("demo-dataset")
def demo_dataset(
    folder: Annotated[
        Path, typer.Option("--folder", help="Where the run starts (default: this folder).")
    ] = Path(),
) -> None:
    """Write the bundled demo dataset (hbench-demo@1.0) and its registry.json below a folder.

    `harbor run -d hbench-demo@1.0 --registry-path .hbench/hbench-demo/registry.json` then
    runs it from that folder, as `hbench registry info hbench-demo` prints.
    """
    registry = demo.materialize((folder / demo.BUNDLED_REGISTRY).parent)
    console.print(f"[green]✓[/green] wrote {escape(str(registry))}")


def _print_record(record: BenchmarkRecord) -> None:
    harbor = record.harbor
    adapter = harbor.adapter.kind if harbor.adapter else "-"
    license_ = record.license
    lines = [
        f"{record.name} ({record.slug})",
        record.description,
        f"paper: {record.paper or '-'}   homepage: {record.homepage or '-'}",
        f"harbor: {harbor.status}, adapter {adapter}, dataset {harbor.dataset or '-'}",
        f"license: {license_.name}; redistribution "
        f"{'allowed' if license_.allows_redistribution else 'not allowed'}",
        f"metric: {record.metric} ({record.metric_scale})",
        "task sets: " + ", ".join(f"{s.name} ({s.task_count})" for s in record.task_sets),
    ]
    if license_.note:
        lines.append(f"license note: {license_.note}")
    if harbor.note:
        lines.append(f"note: {harbor.note}")
    for score in record.known_scores:
        lines.append(
            f"known score: {score.value} {score.model} ({score.source_type}) {score.source}"
        )
    lines.extend(f"board: {b.slug} (model {b.model}, {b.task_set})" for b in record.boards)
    lines.extend(f"run: {command}" for command in record.commands)
    for line in lines:
        typer.echo(line)


app.command("pull")(pull)
app.command("run")(run)

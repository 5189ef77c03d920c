"""`hbench registry run`'s work: what a target names (a pulled folder, a folder of tasks, or
a registry benchmark's Harbor dataset), the `harbor run` that runs it, and what the run
leaves behind: the run summary in the job folder and, for the oracle over a pulled folder,
the oracle record `hbench push` asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench import runsummary
from hbench.errors import HbenchError
from hbench.jobs.reader import read_job
from hbench.runner import run_harbor
from hbench.sandbox import IMPORT_PATH
from registry.demo import BUNDLED_REGISTRY, DATASET_REF, materialize
from registry.loader import Registry
from registry.pull.manifest import (
    OracleRecord,
    PullManifest,
    read_manifest,
    tasks_digest,
    write_oracle,
)

SANDBOX = "sandbox"
"""`--env sandbox`: hbench's bubblewrap environment, which needs no Docker."""


@dataclass(frozen=True)
class Target:
    """What to run: a local folder of tasks, or a Harbor dataset with where to find it."""

    benchmark: str | None
    folder: Path | None = None
    manifest: PullManifest | None = None
    dataset: str | None = None
    source: tuple[str, ...] = ()
    """Harbor's flags saying where the dataset's registry is, when not its default one."""


def resolve(target: str, registry: Registry, cwd: Path) -> Target:
    """The target `hbench registry run` was given, as a folder or `NAME@VERSION`."""
    path = Path(target)
    if path.is_dir():
        folder = path.resolve()
        manifest = read_manifest(folder)
        if manifest is None and not _holds_tasks(folder):
            raise HbenchError(
                "registry-run-target-invalid",
                f"{target} holds no task folders (each with a task.toml); pull a benchmark "
                "into it with hbench registry pull SLUG --out DIR",
            )
        slug = manifest.benchmark if manifest is not None else None
        return Target(benchmark=slug, folder=folder, manifest=manifest)
    if "@" in target:
        matches = registry.benchmarks_for_dataset(target)
        if len(matches) == 1:
            benchmark = matches[0]
            source: tuple[str, ...] = ()
            if target == DATASET_REF:
                materialize((cwd / BUNDLED_REGISTRY).parent)
                source = ("--registry-path", BUNDLED_REGISTRY)
            elif benchmark.harbor.registry_url:
                source = ("--registry-url", benchmark.harbor.registry_url)
            return Target(benchmark=benchmark.slug, dataset=target, source=source)
    known = registry.benchmarks.get(target)
    hint = (
        f"; pull it first: hbench registry pull {target}"
        if known is not None and known.harbor.adapter and known.harbor.adapter.kind == "hf_rows"
        else (
            f"; run its dataset: hbench registry run {known.harbor.dataset}"
            if known is not None and known.harbor.dataset
            else ""
        )
    )
    raise HbenchError(
        "registry-run-target-invalid",
        f"{target} is neither a folder of tasks nor the Harbor dataset (NAME@VERSION) of a "
        f"registry benchmark{hint}",
    )


def _holds_tasks(folder: Path) -> bool:
    return (folder / "task.toml").is_file() or any(folder.glob("*/task.toml"))


def harbor_args(
    target: Target,
    *,
    agent: str,
    model: str | None,
    n_concurrent: int | None,
    attempts: int | None,
    jobs_dir: Path,
    env: str | None,
    job_name: str | None,
) -> list[str]:
    """`harbor run`'s arguments: `-p DIR` or `-d NAME@VERSION`, then the run's settings."""
    args = ["-y"]
    if target.folder is not None:
        args += ["-p", str(target.folder)]
    else:
        assert target.dataset is not None  # noqa: S101 - resolve gives one or the other
        args += ["-d", target.dataset, *target.source]
    args += ["-a", agent, "-o", str(jobs_dir)]
    if model is not None:
        args += ["-m", model]
    if n_concurrent is not None:
        args += ["-n", str(n_concurrent)]
    if attempts is not None:
        args += ["-k", str(attempts)]
    if env is not None:
        args += ["--env", IMPORT_PATH if env == SANDBOX else env]
    if job_name is not None:
        args += ["--job-name", job_name]
    return args


def run(args: list[str], jobs_dir: Path) -> Path:
    """Run Harbor with `harbor_args`' arguments; the job folder it wrote."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    return run_harbor(args, jobs_dir)


@dataclass(frozen=True)
class Summarized:
    path: Path
    body: dict[str, Any]
    failing: list[str]
    oracle_record: Path | None


def summarize(
    job_dir: Path,
    registry: Registry,
    *,
    benchmark: str | None = None,
    model: str | None = None,
) -> Summarized:
    """Write the job's run summary; for an oracle run over a pulled folder, its record too."""
    body = runsummary.build(job_dir, registry, benchmark=benchmark, model=model)
    path = runsummary.write(job_dir, body)
    failing = runsummary.failing_tasks(body)
    record = None
    if body["harness"] == "oracle":
        record = _record_oracle(job_dir, body, failing)
    return Summarized(path=path, body=body, failing=failing, oracle_record=record)


def _record_oracle(job_dir: Path, body: dict[str, Any], failing: list[str]) -> Path | None:
    folder = runsummary.pulled_folder(read_job(job_dir))
    manifest = read_manifest(folder) if folder is not None else None
    if folder is None or manifest is None:
        return None
    record = OracleRecord(
        job=str(job_dir.resolve()),
        tasks_digest=tasks_digest(folder, [row.task for row in manifest.rows]),
        score=float(body["score"]),
        failing=failing,
    )
    return write_oracle(folder, record)

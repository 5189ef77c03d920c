"""A job's run summary (`hbench-run-summary.json`, a RunSubmission as `POST /v1/runs` takes
it), written into the job folder by `hbench registry run`, and the checks `hbench push`
makes before sending one: its figures are still the job's, and the pulled tasks it ran
passed an oracle run first (the skill's honesty rule 3).

The benchmark of a job is found through the registry: a pulled folder's manifest names it,
and a Harbor dataset maps to the benchmark whose `harbor.dataset` it is.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hbench.atomic import atomic_writer
from hbench.errors import HbenchError
from hbench.jobs.models import Job
from hbench.jobs.reader import read_job
from hbench.push import DEFAULT_METRIC, summary_from_job
from registry.loader import Registry
from registry.pull.manifest import ORACLE_RECORD, read_manifest, read_oracle, tasks_digest
from registry.schema import NO_MODEL

SUMMARY_NAME = "hbench-run-summary.json"
NO_MODEL_AGENTS = frozenset({"oracle", "nop"})
"""Harbor's agents that call no model: their runs are pushed with the model `none`."""
FIGURES = (
    "harness",
    "taskCount",
    "nAttempts",
    "score",
    "tokensUsed",
    "costUsd",
    "harborVersion",
    "taskRewards",
)
"""What a summary says the job measured; none of it may differ from the job's own files."""


def pulled_folder(job: Job) -> Path | None:
    """The pulled folder (one holding `hbench-pull.json`) the job ran, if it ran one."""
    for dataset in job.datasets:
        if dataset.path is None:
            continue
        for folder in _candidates(Path(dataset.path), job.path):
            if read_manifest(folder) is not None:
                return folder
    return None


def _candidates(path: Path, job_dir: Path) -> list[Path]:
    if path.is_absolute():
        return [path]
    # Harbor records the path as given, relative to where it ran: usually the jobs folder's
    # parent.
    return [Path.cwd() / path, job_dir.parent.parent / path]


def benchmark_of(job: Job, registry: Registry) -> str:
    """The registry benchmark a job ran: its pulled folder's, or its Harbor dataset's."""
    folder = pulled_folder(job)
    if folder is not None:
        manifest = read_manifest(folder)
        assert manifest is not None  # noqa: S101 - pulled_folder found it
        return manifest.benchmark
    found: set[str] = set()
    for dataset in job.datasets:
        if dataset.name is None:
            continue
        found.update(benchmarks_named(registry, dataset.name, dataset.version))
    if len(found) == 1:
        return found.pop()
    refs = ", ".join(job.dataset_refs) or "none"
    why = "several benchmarks" if found else "no benchmark of the registry"
    raise HbenchError(
        "push-benchmark-unknown",
        f"{job.path} ran {refs}, which is {why}'s Harbor dataset; pass --benchmark SLUG "
        "(hbench registry search lists them)",
    )


def benchmarks_named(registry: Registry, name: str, version: str | None) -> set[str]:
    """The benchmarks whose `harbor.dataset` is Harbor's dataset `name` (at `version`, when
    one has it): `swebench-verified@1.0` is `swe-bench-verified`."""
    if version is not None:
        exact = {b.slug for b in registry.benchmarks_for_dataset(f"{name}@{version}")}
        if exact:
            return exact
    by_name = {
        b.slug
        for b in registry.benchmarks.values()
        if b.harbor.dataset is not None and b.harbor.dataset.rsplit("@", 1)[0] == name
    }
    if by_name:
        return by_name
    return {name} if name in registry.benchmarks else set()


def build(
    job_dir: Path,
    registry: Registry,
    *,
    benchmark: str | None = None,
    model: str | None = None,
    metric: str | None = None,
) -> dict[str, Any]:
    """The RunSubmission of a finished job: its benchmark from the registry (unless given),
    that benchmark's metric, and the model `none` for an agent that calls none."""
    job = read_job(job_dir)
    slug = benchmark or benchmark_of(job, registry)
    known = registry.benchmarks.get(slug)
    if metric is None:
        metric = known.metric if known is not None else DEFAULT_METRIC
    if model is None and set(job.agent_names) <= NO_MODEL_AGENTS and not job.model_names:
        model = NO_MODEL
    return summary_from_job(job_dir, benchmark=slug, model=model, metric=metric)


def write(job_dir: Path, body: dict[str, Any]) -> Path:
    path = job_dir / SUMMARY_NAME
    with atomic_writer(path) as stream:
        stream.write((json.dumps(body, indent=2) + "\n").encode())
    return path


def newest(jobs_dir: Path) -> Path | None:
    """The newest summary under `jobs_dir` (by its time of writing), if any."""
    found = sorted(jobs_dir.glob(f"*/{SUMMARY_NAME}"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def failing_tasks(body: dict[str, Any]) -> list[str]:
    """The tasks of a summary with a trial that did not score 1."""
    rewards = body.get("taskRewards") or []
    return sorted({str(r["task"]) for r in rewards if float(r.get("reward") or 0) < 1})


def check_unedited(job_dir: Path, body: dict[str, Any], registry: Registry) -> None:
    """Refuse a summary whose `resultsHash` or figures are no longer its job's."""
    result = job_dir / "result.json"
    actual = hashlib.sha256(result.read_bytes()).hexdigest()
    if str(body.get("resultsHash") or "").lower() != actual:
        raise HbenchError(
            "push-results-hash-mismatch",
            f"the summary's resultsHash is not the sha256 of {result} ({actual[:12]}…): the "
            "summary was edited or belongs to another job. Nothing was pushed; rebuild it with "
            f"hbench registry run {job_dir} --summarize-only",
        )
    rebuilt = build(
        job_dir,
        registry,
        benchmark=str(body.get("benchmarkSlug")),
        model=str(body.get("model")),
        metric=str(body.get("metric")),
    )
    changed = [key for key in FIGURES if _comparable(body.get(key)) != _comparable(rebuilt[key])]
    if changed:
        raise HbenchError(
            "push-summary-edited",
            f"the summary's {', '.join(changed)} differ from what {job_dir} holds. Nothing was "
            f"pushed; rebuild it with hbench registry run {job_dir} --summarize-only",
        )


def _comparable(value: Any) -> Any:
    """Numbers compared as numbers: JSON may write 80 or 80.0."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return round(float(value), 9)
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    return value


def check_oracle(job_dir: Path) -> None:
    """Refuse a run over pulled tasks with solutions until an oracle run of exactly those
    tasks scored 100. Tasks pulled without solutions can't be checked so, and pass."""
    job = read_job(job_dir)
    folder = pulled_folder(job)
    if folder is None:
        return
    manifest = read_manifest(folder)
    assert manifest is not None  # noqa: S101 - pulled_folder found it
    if not manifest.solutions:
        return
    oracle = read_oracle(folder)
    current = tasks_digest(folder, [row.task for row in manifest.rows])
    fix = f"run hbench registry run {folder} -a oracle first"
    if oracle is None:
        why = f"no oracle run of {folder} is recorded ({ORACLE_RECORD})"
    elif oracle.tasks_digest != current:
        why = f"the tasks in {folder} changed since the oracle ran them"
    elif oracle.score < 100:
        failing = ", ".join(oracle.failing[:10]) or "?"
        why = f"the oracle scored {oracle.score:g} on {folder} (failing: {failing})"
        fix = "report the failing tasks, and push nothing"
    else:
        return
    raise HbenchError("push-oracle-not-passed", f"{why}; {fix}")

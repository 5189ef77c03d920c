"""`hbench push`'s work: a run summary (`RunSubmission`) from a job folder or a file, sent to
a service's `POST /v1/runs`, and its answer read back.

The summary holds figures only, never outputs: `score = mean(reward) * 100` over every
trial (an errored trial counts 0), each trial's reward, token and cost totals, versions,
and the sha256 of the job's `result.json`. The runs API answers refusals in its own shape,
`{"error": {"code", "message", "details", "type"}}`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hbench import __version__
from hbench.codes import CODE_NAMES
from hbench.errors import HbenchError, Problem

if TYPE_CHECKING:
    import httpx

    from hbench.jobs.models import Job

RUNS_PATH = "/v1/runs"
DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_METRIC = "accuracy"
MAX_TASK_REWARDS = 5000
TIMEOUT = 30.0
"""Seconds to connect, and for each read and write: httpx's `Timeout(30.0)`."""


def summary_from_job(
    job_dir: Path, *, benchmark: str, model: str | None = None, metric: str
) -> dict[str, Any]:
    """The RunSubmission of a finished job folder, of the registry benchmark `benchmark`
    (`hbench.runsummary.benchmark_of` finds it); `model` when the job can't tell it."""
    # The job reader and httpx are imported where they are used: `hbench --help` reads
    # DEFAULT_URL here and needs neither.
    from hbench.jobs.reader import read_job  # noqa: PLC0415

    job = read_job(job_dir)
    rewards = [
        {"task": t.task_name or t.trial_name, "reward": t.reward or 0.0}
        for t in sorted(job.results, key=lambda t: (t.task_name or "", t.attempt or 0))
    ]
    tokens = [job.n_input_tokens, job.n_output_tokens]  # input includes cached tokens
    return {
        "benchmarkSlug": benchmark,
        "model": model or job_model(job),
        "harness": job_harness(job),
        "taskCount": max(1, len({t.task_name for t in job.results})),
        "nAttempts": job.n_attempts,
        "score": job.score * 100,
        "metric": metric,
        "tokensUsed": sum(t for t in tokens if t is not None)
        if any(t is not None for t in tokens)
        else None,
        "costUsd": job.cost_usd,
        "harborVersion": job.harbor_version,
        "cliVersion": __version__,
        "resultsHash": hashlib.sha256((job_dir / "result.json").read_bytes()).hexdigest(),
        # A job of more trials than a summary may list still sends its score.
        "taskRewards": rewards if len(rewards) <= MAX_TASK_REWARDS else None,
        "notes": None,
    }


def job_model(job: Job) -> str:
    models = set(job.model_names) | {t.model for t in job.results if t.model}
    if len(models) == 1:
        return models.pop()
    found = ", ".join(sorted(models)) if models else "none recorded"
    raise HbenchError(
        "push-model-unknown",
        f"can't tell the model of {job.path} ({found}); pass --model NAME "
        "(--model none for an agent that uses no model)",
    )


def job_harness(job: Job) -> str:
    agents = job.agent_names
    if len(agents) != 1:
        raise HbenchError(
            "push-summary-invalid",
            f"{job.path} ran {len(agents)} agents ({', '.join(agents)}); a summary is one "
            "agent's run",
        )
    return agents[0]


def load_summary(path: Path) -> dict[str, Any]:
    """A summary file as it is: a JSON object, checked by the service, not here."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HbenchError("push-summary-invalid", f"can't read {path} as JSON: {error}") from None
    if not isinstance(body, dict):
        raise HbenchError("push-summary-invalid", f"{path} holds JSON, but not an object")
    return body


def newest_job(jobs_dir: Path) -> Path:
    """The most recently finished job folder under `jobs_dir`, for `hbench push` alone."""
    results = sorted(jobs_dir.glob("*/result.json"), key=lambda p: p.stat().st_mtime)
    if not results:
        raise HbenchError(
            "push-summary-invalid",
            f"no job folder under {jobs_dir}; pass a summary file or a job folder",
        )
    return results[-1].parent


@dataclass(frozen=True)
class Pushed:
    """A run the service stored: its id and address."""

    id: str
    url: str


def push(
    base_url: str,
    body: dict[str, Any],
    token: str | None,
    *,
    transport: httpx.BaseTransport | None = None,
) -> Pushed:
    """Send a summary to `<base_url>/v1/runs`; the stored run, or the refusal as an error."""
    import httpx  # noqa: PLC0415 - see summary_from_job

    url = base_url.rstrip("/") + RUNS_PATH
    headers = {"user-agent": f"hbench/{__version__}"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    try:
        with httpx.Client(timeout=TIMEOUT, transport=transport) as client:
            response = client.post(url, json=body, headers=headers)
    except httpx.HTTPError as error:
        raise HbenchError(
            "push-unreachable", f"could not reach {url}: {error.__class__.__name__}: {error}"
        ) from None
    try:
        answer: Any = response.json()
    except ValueError:
        answer = None
    if response.status_code == 201 and isinstance(answer, dict):
        data = answer.get("data") or {}
        return Pushed(id=str(data.get("id")), url=str(answer.get("url")))
    raise refusal(url, response.status_code, answer, response.text)


def refusal(url: str, status: int, answer: Any, text: str) -> HbenchError:
    """The service's refusal as an error, keeping its code when hbench knows it."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return HbenchError(
            "push-refused", f"{url} answered HTTP {status} without a runs-API answer: {text[:200]}"
        )
    code, message = str(error.get("code") or ""), str(error.get("message") or "refused")
    details = error.get("details")
    listed = details if isinstance(details, list) else []
    problems = [detail_problem(code, d) for d in listed if isinstance(d, dict)]
    head = Problem(code, f"{message} (HTTP {status})") if code in CODE_NAMES else None
    if head is None:
        head = Problem("push-refused", f"{message} (HTTP {status}) [{code or 'no code'}]")
    return HbenchError.from_problems([head, *problems])


def detail_problem(code: str, detail: dict[str, Any]) -> Problem:
    path = ".".join(str(part) for part in detail.get("path") or []) or None
    message = str(detail.get("message") or "invalid")
    return Problem(code if code in CODE_NAMES else "push-refused", message, path)

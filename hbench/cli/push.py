"""`hbench push [SUMMARY]`: send a run summary to a service's runs API (`POST /v1/runs`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from hbench.cli.output import console, handled
from hbench.errors import HbenchError
from hbench.push import DEFAULT_URL

URL_VARIABLE = "HBENCH_URL"


def push_command(
    summary: Annotated[
        Path | None,
        typer.Argument(
            help="A RunSubmission JSON file (hbench-run-summary.json), or a job folder to "
            "summarise (default: the newest summary under ./jobs, else its newest job).",
        ),
    ] = None,
    *,
    url: Annotated[
        str,
        typer.Option("--url", envvar=URL_VARIABLE, help="The service's base address (no /v1/…)."),
    ] = DEFAULT_URL,
    benchmark: Annotated[
        str | None,
        typer.Option("--benchmark", help="The registry's benchmark slug, when the job can't tell."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="The model, when the job can't tell.")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="The metric, for a job folder (default: the benchmark's, else accuracy).",
        ),
    ] = None,
    notes: Annotated[
        str | None,
        typer.Option("--notes", help="Settings that make the score non-comparable (temperature…)."),
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env",
            help="The variable holding your API token (hpg_…), for the higher limit; "
            "without it the push is anonymous.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the body and send nothing.")
    ] = False,
) -> None:
    """Push a run's score summary: the figures only, never outputs, transcripts or keys.

    A summary beside its job must still match it: its resultsHash is the sha256 of the
    job's result.json, and its figures are the job's (push-results-hash-mismatch,
    push-summary-edited). A run over pulled tasks waits for an oracle run of them that
    scored 100 (push-oracle-not-passed). Harbor's dataset names map to registry slugs
    through the registry's harbor.dataset. Prints the run's id and address; exits 1 when
    the service refuses it, with the refusal's message and code.
    """
    # Imported here: `hbench --help` lists this command without them.
    from hbench import runsummary  # noqa: PLC0415
    from hbench.push import load_summary, push  # noqa: PLC0415
    from hbench.runsummary import SUMMARY_NAME  # noqa: PLC0415
    from registry.loader import load_registry  # noqa: PLC0415

    with handled():
        registry = load_registry()
        source = summary if summary is not None else newest_source(Path("jobs"))
        if source.is_dir() and (source / SUMMARY_NAME).is_file():
            source = source / SUMMARY_NAME
        if source.is_dir():
            body = runsummary.build(
                source, registry, benchmark=benchmark, model=model, metric=metric
            )
            job_dir: Path | None = source
        else:
            body = load_summary(source)
            job_dir = source.parent if (source.parent / "result.json").is_file() else None
            if job_dir is not None:
                runsummary.check_unedited(job_dir, body, registry)
            body.update({k: v for k, v in (("benchmarkSlug", benchmark), ("model", model)) if v})
        if job_dir is not None:
            runsummary.check_oracle(job_dir)
        if notes is not None:
            body["notes"] = notes
        if dry_run:
            typer.echo(json.dumps(body, indent=2))
            return
        pushed = push(url, body, api_token(token_env))
    console.print(f"[green]✓[/green] pushed {pushed.id}")
    typer.echo(pushed.url)


def newest_source(jobs_dir: Path) -> Path:
    """What `hbench push` alone sends: the newest run summary under `jobs_dir`, else the
    newest job folder there."""
    from hbench import runsummary  # noqa: PLC0415
    from hbench.push import newest_job  # noqa: PLC0415

    found = runsummary.newest(jobs_dir)
    return found if found is not None else newest_job(jobs_dir)


def api_token(token_env: str | None) -> str | None:
    if token_env is None:
        return None
    token = os.environ.get(token_env, "").strip()
    if not token:
        raise HbenchError(
            "push-token-missing",
            f"the variable {token_env} is unset or empty; export {token_env}=hpg_… or leave "
            "--token-env out to push anonymously",
        )
    return token

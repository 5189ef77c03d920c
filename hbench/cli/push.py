"""`hbench push [SUMMARY]`: send a run summary to a service's runs API (`POST /v1/runs`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from hbench.cli.output import console, handled
from hbench.errors import HbenchError
from hbench.push import (
    DEFAULT_METRIC,
    DEFAULT_URL,
    load_summary,
    newest_job,
    push,
    summary_from_job,
)

URL_VARIABLE = "HBENCH_URL"


def push_command(
    summary: Annotated[
        Path | None,
        typer.Argument(
            help="A RunSubmission JSON file, or a job folder to summarise (default: the "
            "newest job under ./jobs).",
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
        str, typer.Option("--metric", help="The benchmark's metric, for a job folder.")
    ] = DEFAULT_METRIC,
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

    Prints the run's id and address; exits 1 when the service refuses it, with the
    refusal's message and code.
    """
    with handled():
        source = summary if summary is not None else newest_job(Path("jobs"))
        if source.is_dir():
            body = summary_from_job(source, benchmark=benchmark, model=model, metric=metric)
        else:
            body = load_summary(source)
            body.update({k: v for k, v in (("benchmarkSlug", benchmark), ("model", model)) if v})
        if notes is not None:
            body["notes"] = notes
        if dry_run:
            typer.echo(json.dumps(body, indent=2))
            return
        pushed = push(url, body, api_token(token_env))
    console.print(f"[green]✓[/green] pushed {pushed.id}")
    typer.echo(pushed.url)


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

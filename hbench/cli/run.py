"""`hbench run`: run Harbor on an issued spec exactly as it is, then seal the job."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hbench.cli.output import (
    check_resumable_with_progress,
    console,
    errors,
    handled,
    seal_with_progress,
)
from hbench.errors import HbenchError

ALLOWED = "--jobs-dir and --max-retries"


def run(
    ctx: typer.Context,
    config: Annotated[
        Path, typer.Option("--config", "-c", help="The spec.json the service issued.")
    ],
    jobs_dir: Annotated[
        Path | None,
        typer.Option("--jobs-dir", "-o", help="Where Harbor writes the job folder."),
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option(
            "--max-retries",
            "-r",
            min=0,
            help="Rerun crashed trials up to this many times (Harbor's default exclusions kept).",
        ),
    ] = None,
) -> None:
    """Run a benchmark from its spec with Harbor, then seal the job folder.

    Only --jobs-dir and --max-retries may be added: any other setting would change
    the spec, and the service would refuse the upload (local-spec-mismatch). The spec
    is kept in the job folder as hbench-spec.json, so a run stopped before it was
    sealed is sealed with it by hbench jobs resume. When the job's folder exists,
    Harbor resumes that job: as for hbench jobs resume, its seal must still hold.
    """
    from hbench.digest import spec_digest  # noqa: PLC0415 - --help needs none of these
    from hbench.runner import load_spec, run_spec  # noqa: PLC0415

    with handled():
        if ctx.args:
            raise HbenchError(
                "spec-flag-refused",
                f"hbench run takes only {ALLOWED} besides --config; "
                f"{' '.join(ctx.args)} would change the spec the job must match",
            )
        spec = load_spec(config)
        planned = spec.job_dir(jobs_dir)
        if planned is not None and planned.is_dir():
            check_resumable_with_progress(planned)
        job_dir = run_spec(spec, jobs_dir=jobs_dir, max_retries=max_retries)
        manifest = seal_with_progress(job_dir, spec_digest=spec_digest(spec.data))
    console.print(f"[green]✓[/green] sealed {job_dir} ({len(manifest.files)} files)")
    errors.print(f"Check it with: hbench jobs verify -p {job_dir}")

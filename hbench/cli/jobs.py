"""`hbench jobs …`: resume, verify, pack and upload a job folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hbench.cli.main import PLAIN, Listing
from hbench.cli.output import (
    byte_progress,
    check_resumable_with_progress,
    console,
    errors,
    folder_progress,
    handled,
    print_problems,
    seal_with_progress,
)
from hbench.errors import HbenchError, Problem
from hbench.limits import UPLOAD_MAX_BYTES

# Each command imports what it uses where it uses it: `hbench --help` lists this group
# without any of it, and `hbench jobs upload` never imports Harbor's runner.
if TYPE_CHECKING:
    from rich.table import Table

    from hbench.jobs.models import Job
    from hbench.upload import UploadAnswer

app = typer.Typer(
    help="Resume, verify, pack and upload job folders.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN,
    cls=Listing,
)

JobPath = Annotated[
    Path,
    typer.Option(
        "--path", "-p", help="The job's own folder, such as jobs/<job-name>.", file_okay=False
    ),
]
MIB = 1024 * 1024


@app.command()
def resume(job_path: JobPath) -> None:
    """Continue a stopped job with Harbor, then seal it again.

    A job sealed before must still match its manifest, apart from what Harbor's resume
    changes: config.json, lock.json and result.json rewritten, lines appended to job.log,
    folders of trials without a sealed result deleted, new trials' folders. Otherwise
    nothing runs (resume-seal-broken). A job stopped before it was sealed is sealed with
    the spec hbench run recorded in it (hbench-spec.json).
    """
    from hbench.runner import resume_job  # noqa: PLC0415

    with handled():
        check_resumable_with_progress(job_path)
        resume_job(job_path)
        manifest = seal_with_progress(job_path)
    console.print(f"[green]✓[/green] resumed and sealed {job_path} ({len(manifest.files)} files)")


def job_problems(job_dir: Path) -> tuple[Job | None, list[Problem]]:
    """Everything wrong with a job: integrity against its manifest, then finished and complete."""
    from hbench.jobs.completeness import completeness_problems  # noqa: PLC0415
    from hbench.jobs.consistency import consistency_problems  # noqa: PLC0415
    from hbench.jobs.reader import read_job  # noqa: PLC0415
    from hbench.jobs.verification import verify as verify_manifest  # noqa: PLC0415

    with folder_progress("verifying", job_dir) as advance:
        problems = list(verify_manifest(job_dir, progress=advance))
    try:
        job = read_job(job_dir)
    except HbenchError as error:
        return None, [*problems, *error.problems]
    return job, [*problems, *completeness_problems(job), *consistency_problems(job)]


@app.command()
def verify(job_path: JobPath) -> None:
    """Check a job: unchanged since it was sealed, finished, and every planned trial has a result.

    A job holding the spec hbench run recorded (hbench-spec.json) must name that spec in
    its manifest (manifest-spec-mismatch).

    Exits 0 when all of it holds and 1 otherwise, printing each problem with its rule code.
    """
    with handled():
        job, problems = job_problems(job_path)
    if problems:
        print_problems(problems)
        raise typer.Exit(code=1)
    assert job is not None  # noqa: S101 - read_job succeeded when there are no problems
    console.print(summary_table(job))
    console.print(f"[green]✓[/green] {job_path} is sealed, finished and complete")


def summary_table(job: Job) -> Table:
    from rich.table import Table  # noqa: PLC0415

    table = Table(title=f"job {job.job_name}", show_header=False)
    table.add_row("job id", job.job_id)
    table.add_row("datasets", ", ".join(job.dataset_refs) or "-")
    table.add_row("agents", ", ".join(job.agent_names) or "-")
    table.add_row("models", ", ".join(job.model_names) or "-")
    table.add_row("trials", str(len(job.trials)))
    table.add_row("score", f"{job.score:.3f}")
    for k, value in sorted(job.pass_at_k.items()):
        table.add_row(f"pass@{k}", f"{value:.3f}")
    return table


@app.command()
def pack(
    job_path: JobPath,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="The archive to write (job.tgz).")
    ] = None,
) -> None:
    """Pack the job's own folder into a deterministic .tar.gz (the same bytes every time)."""
    from hbench.jobs.pack import pack_to_path  # noqa: PLC0415

    target = output or Path(f"{job_path.name}.tgz")
    with handled():
        result = pack_to_path(job_path, target)
    cap = UPLOAD_MAX_BYTES / MIB
    size = result.size / MIB
    console.print(
        f"[green]✓[/green] wrote {target}: {size:.2f} MiB of the {cap:.0f} MiB upload cap"
    )
    if result.size > UPLOAD_MAX_BYTES:
        console.print(
            f"{size:.1f} MiB is over the {cap:.0f} MiB one request sends: `hbench jobs upload` "
            "sends it in parts, up to its board's cap (95 MiB unless the board says more)"
        )


@app.command()
def upload(
    job_path: Annotated[Path, typer.Argument(help="The job's own folder, such as jobs/<job>.")],
    *,
    url: Annotated[str, typer.Option("--url", help="The upload endpoint, …/api/bench/uploads.")],
    token_env: Annotated[
        str | None,
        typer.Option("--token-env", help="The variable holding your API token (hpg_…)."),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", "-H", help='A header to send, such as "hpg-run-token: hpr_…".'),
    ] = None,
    parts_over: Annotated[
        float,
        typer.Option(
            "--parts-over",
            help="Send the job in parts when its archive is over this many MiB: by default "
            "the 95 MiB one request may send.",
            min=0,
        ),
    ] = UPLOAD_MAX_BYTES / MIB,
    part_size: Annotated[
        int,
        typer.Option(
            "--part-size", help="MiB per part, when sent in parts (1 to 95).", min=1, max=95
        ),
    ] = 64,
) -> None:
    """Verify the job, pack it, stream it to the service, and print the service's answer.

    A job over 95 MiB packed is sent in parts (docs/uploads.md): each part is checked by
    the service as it arrives, and after a dropped connection the upload goes on from the
    first part the service lacks (up to 5 tries in a row). Run the same command again after
    it stopped, with the same --part-size: it goes on from the parts the service holds, for
    as long as they wait there (24 hours). The service then checks the whole job as it
    checks one sent at once, up to its board's cap.

    Exits 1 when the job fails its checks here or the service refuses it.
    """
    from hbench.upload import auth_headers  # noqa: PLC0415

    with handled():
        api_token = os.environ.get(token_env, "") if token_env else None
        headers = auth_headers(api_token, header or [])
        _, problems = job_problems(job_path)
        if problems:
            print_problems(problems)
            errors.print("The service would refuse this job; nothing was sent.")
            raise typer.Exit(code=1)
        answer = _pack_and_send(
            job_path, url, headers, parts_over=int(parts_over * MIB), part_bytes=part_size * MIB
        )
    print_answer(answer)
    if not answer.accepted:
        raise typer.Exit(code=1)


def _pack_and_send(
    job_path: Path, url: str, headers: dict[str, str], *, parts_over: int, part_bytes: int
) -> UploadAnswer:
    from hbench.jobs.pack import pack_to_path  # noqa: PLC0415
    from hbench.upload import send_archive  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="hbench-upload-") as scratch:
        archive = Path(scratch) / f"{job_path.name}.tgz"
        result = pack_to_path(job_path, archive)
        if result.size > parts_over:
            from hbench.upload_parts import send_in_parts  # noqa: PLC0415

            with byte_progress("uploading in parts", result.size) as advance:
                return send_in_parts(url, archive, headers, part_bytes=part_bytes, progress=advance)
        with byte_progress("uploading", result.size) as advance:
            return send_archive(url, archive, headers, progress=advance)


def print_answer(answer: UploadAnswer) -> None:
    if answer.accepted:
        console.print_json(data=answer.body)
        return
    print_problems(answer.problems())
    errors.print(f"[dim]The service answered {answer.status_code}.[/dim]")

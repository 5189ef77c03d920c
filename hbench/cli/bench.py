"""`hbench bench …`: Your bench from the terminal: list and show your jobs, publish,
withdraw and delete them."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from hbench.bench import DEFAULT_REGRADE_WAIT, Bench
from hbench.cli.main import PLAIN, Listing
from hbench.cli.output import console, errors, handled
from hbench.cli.service_options import TokenEnvOption, UrlOption, token_from_env

app = typer.Typer(
    help="Your bench: list, show, publish, withdraw and delete your uploaded jobs.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN,
    cls=Listing,
)

JobArgument = Annotated[str, typer.Argument(help="The job's id, from `hbench bench list`.")]


def bench_for(url: str, token_env: str | None) -> Bench:
    """Your bench on the service, with the API token the named variable holds."""
    return Bench(url, token_from_env(token_env, "bench-token-missing"))


@app.command("list")
def list_jobs(
    url: UrlOption,
    token_env: TokenEnvOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List your jobs, newest first."""
    with handled():
        jobs = bench_for(url, token_env).jobs()
    if as_json:
        console.print_json(data=jobs)
        return
    if not jobs:
        console.print("You have no jobs on Your bench.")
        return
    table = Table(
        "id", "name", "status", "dataset", "agent", "score", "boards", "regrade", "evidence",
        "uploaded",
    )  # fmt: skip
    for job in jobs:
        table.add_row(
            job["id"], escape(job["name"]), job["status"], escape(str(job["dataset"])),
            escape(job["agent"]), f"{job['score']:.3f}", escape(boards_text(job["boards"])),
            job["regrade"]["status"].replace("_", " "), ", ".join(job["evidence"]),
            job["uploaded_at"],
        )  # fmt: skip
    console.print(table)


@app.command()
def show(
    job_id: JobArgument,
    url: UrlOption,
    token_env: TokenEnvOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the service's whole answer as JSON.")
    ] = False,
) -> None:
    """Show one of your jobs: what it is, its boards, and what you can do with it now
    (publish, withdraw, delete, download), with the reason and rule code of each you
    can't. --json prints everything: its summary, checks, redactions and regrade."""
    with handled():
        job = bench_for(url, token_env).job(job_id)
    if as_json:
        console.print_json(data=job)
        return
    console.print(f"[bold]{escape(job['name'])}[/bold] ({job['id']}): {job['status']}")
    console.print(
        f"{escape(str(job['dataset']))}, {escape(job['agent'])}, model "
        f"{escape(str(job['model']))}, score {job['score']:.3f}, uploaded {job['uploaded_at']}"
    )
    console.print(f"boards: {escape(boards_text(job['boards']))}")
    for note in job["boards"].get("notes") or []:
        console.print(f"  {escape(note['message'])} ({note['code']})")
    console.print("what you can do:")
    for line in action_lines(job.get("actions") or {}):
        console.print(f"  {line}")


ACTIONS = ("publish", "withdraw", "delete", "download")


def action_lines(actions: dict[str, Any]) -> list[str]:
    """One line per action: a tick when it is possible, else why not and its rule code."""
    lines = []
    for name in ACTIONS:
        action = actions.get(name)
        if not action:
            continue
        if action["possible"]:
            lines.append(f"[green]✓[/green] {name}")
        else:
            why = escape(str(action.get("reason") or ""))
            lines.append(f"[red]✗[/red] {name}: {why} ({action.get('code')})")
    return lines


@app.command()
def publish(
    job_id: JobArgument,
    url: UrlOption,
    token_env: TokenEnvOption = None,
    board: Annotated[
        str | None, typer.Option("--board", help="The board, when the job fits several.")
    ] = None,
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            min=0,
            help="Seconds to wait while the service regrades the job (regrade-pending).",
        ),
    ] = DEFAULT_REGRADE_WAIT,
) -> None:
    """Publish a private job's score to its board (once, within 30 days of its upload).

    A job the service is still regrading is published once the regrade agrees: this
    waits for it, up to --wait seconds.
    """

    def waiting() -> None:
        errors.print("The service is regrading the job's recorded outputs; waiting for it…")

    with handled():
        done = bench_for(url, token_env).publish_when_regraded(
            job_id, board, wait=wait, waiting=waiting
        )
    opened = " (a new board)" if done.get("opened_board") else ""
    console.print(
        f"[green]✓[/green] published job {done['id']} on {escape(done['board'])}{opened} "
        f"under {escape(done['owner'])}'s entry {escape(done['entry'])}"
    )


@app.command()
def withdraw(job_id: JobArgument, url: UrlOption, token_env: TokenEnvOption = None) -> None:
    """Withdraw a published job's score from its board, for good."""
    with handled():
        done = bench_for(url, token_env).withdraw(job_id)
    console.print(
        f"[green]✓[/green] withdrew job {done['id']} from {escape(str(done['board']))}; "
        "it can't be published again"
    )


@app.command()
def delete(
    job_id: JobArgument,
    url: UrlOption,
    confirm: Annotated[
        str, typer.Option("--confirm", help="The job's name, typed again: it can't be undone.")
    ],
    token_env: TokenEnvOption = None,
) -> None:
    """Delete a job and its files from Your bench. A published job's score stays on its
    board (withdraw it first to take it off); its run's page says the files were deleted."""
    with handled():
        done = bench_for(url, token_env).delete(job_id, confirm)
    board = done.get("score_stays_on")
    kept = f"; its score stays on {escape(board)}" if board else ""
    console.print(
        f"[green]✓[/green] deleted job {done['id']}; its files leave storage by "
        f"{done['files_purged_by']}{kept}"
    )


def boards_text(boards: dict[str, Any]) -> str:
    if boards.get("fits"):
        return ", ".join(boards["fits"])
    if boards.get("opens"):
        return f"new: {boards['opens']}"
    return "none"

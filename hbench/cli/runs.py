"""`hbench runs …`: issue a run from an hbench service, list your runs, abandon one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

import typer
from rich.markup import escape
from rich.table import Table

from hbench.cli.main import PLAIN, Listing
from hbench.cli.output import console, handled
from hbench.cli.service_options import TokenEnvOption, UrlOption, token_from_env
from hbench.errors import HbenchError
from hbench.issue import (
    RUNS_PATH,
    Service,
    check_folder_free,
    issue_body,
    parse_hardware,
    parse_kwargs,
    read_template,
    run_command,
    shard_folder,
    upload_command,
    write_run_folder,
)
from hbench.sandbox import IMPORT_PATH

app = typer.Typer(
    help="Issue runs from an hbench service, list them, and abandon them.",
    no_args_is_help=True,
    rich_markup_mode=PLAIN,
    cls=Listing,
)


def service_for(url: str, token_env: str | None) -> Service:
    """The service to call, with the API token the named variable holds."""
    return Service(url, token_from_env(token_env, "runs-token-missing"))


@app.command()
def issue(
    *,
    url: UrlOption,
    agent: Annotated[str, typer.Option("--agent", help="The agent, such as oracle.")],
    token_env: TokenEnvOption = None,
    board: Annotated[
        str | None, typer.Option("--board", help="The board's slug, such as hbench-demo.")
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", help="The benchmark as NAME@VERSION, instead of --board."),
    ] = None,
    task_set: Annotated[
        str | None, typer.Option("--task-set", help="The task set (default: full).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="The model's slug, with --dataset.")
    ] = None,
    attempts: Annotated[
        int | None, typer.Option("--attempts", help="Attempts per task: 1 (default) or 3.")
    ] = None,
    kwargs: Annotated[
        str | None,
        typer.Option("--kwargs", help="The agent's options as JSON, such as '{\"x\": 1}'."),
    ] = None,
    prompt_template: Annotated[
        Path | None,
        typer.Option("--prompt-template", help="A Jinja2 prompt template using {{ instruction }}."),
    ] = None,
    extra_instruction: Annotated[
        list[str] | None,
        typer.Option("--extra-instruction", help="A passage added to every task (up to 8)."),
    ] = None,
    registry: Annotated[
        str | None,
        typer.Option("--registry", help="Read the tasks from this registry.json (URL or path)."),
    ] = None,
    hardware: Annotated[
        list[str] | None,
        typer.Option("--hardware", help="KEY=VALUE about your machine, such as gpu=A100."),
    ] = None,
    folder: Annotated[
        Path | None,
        typer.Option("--dir", help="The run's folder (default: runs/<job-name>).", file_okay=False),
    ] = None,
    sandbox: Annotated[
        bool,
        typer.Option(
            "--sandbox",
            help="Run the trials in hbench's bubblewrap sandbox instead of Harbor's docker "
            "environment, where the benchmark allows it (the demo does), for a machine "
            "without Docker.",
        ),
    ] = False,
    environment: Annotated[
        str | None,
        typer.Option(
            "--environment",
            "-e",
            help="The Harbor environment type the trials run in, such as docker, daytona or "
            "modal: one the board allows (default: the board's first, usually docker).",
        ),
    ] = None,
    concurrent_trials: Annotated[
        int | None,
        typer.Option(
            "--concurrent-trials",
            "-n",
            min=1,
            help="Trials run at once (Harbor's -n; default 4), up to the board's limit.",
        ),
    ] = None,
    shards: Annotated[
        int,
        typer.Option(
            "--shards",
            min=1,
            help="Split the run's tasks into this many shards (up to the board's maxShards), "
            "each with its own spec and run token in shard-<i>/ of the run's folder, run and "
            "uploaded on its own; the run counts once, when every shard is uploaded.",
        ),
    ] = 1,
) -> None:
    """Issue a run, write its folder (spec.json, prompt.j2, the run token), and print how
    to run and upload it. The run token is kept in a file only you can read."""
    with handled():
        if sandbox and environment is not None:
            message = "give --sandbox or --environment, not both: each says where trials run"
            raise HbenchError("runs-option-invalid", message)
        service = service_for(url, token_env)
        body = issue_body(
            agent=agent,
            board=board,
            dataset=dataset,
            task_set=task_set,
            model=model,
            attempts=attempts,
            kwargs=parse_kwargs(kwargs),
            prompt_template=read_template(prompt_template),
            extra_instructions=extra_instruction,
            registry=registry,
            hardware=parse_hardware(hardware or []),
            environment=IMPORT_PATH if sandbox else environment,
            concurrent_trials=concurrent_trials,
            shards=shards,
        )
        if folder is not None:
            check_folder_free(folder)
        answer = service.call("POST", RUNS_PATH, body)
        run_dir = folder if folder is not None else Path("runs") / answer["job_name"]
        write_run_folder(run_dir, answer)
    print_issued(answer, run_dir, url)


def print_issued(answer: dict[str, Any], run_dir: Path, url: str) -> None:
    if answer.get("shards"):
        print_sharded(answer, run_dir, url)
        return
    console.print(
        f"[green]✓[/green] issued run {answer['run_id']} on {escape(answer['board'])} as entry "
        f"{escape(answer['submission'])}; its token is in {escape(str(run_dir / 'run-token'))} "
        f"and works until {answer['expires_at']}"
    )
    execution = answer.get("execution")
    if isinstance(execution, dict):
        console.print(
            f"Its trials run in {escape(str(execution.get('environment')))}, "
            f"{execution.get('n_concurrent_trials')} at once."
        )
    yours = [v for v in answer["environment"] if v.get("value") is None]
    if yours:
        console.print("\nSet these first:")
        for variable in yours:
            console.print(f"  {variable['name']}: {escape(variable['description'])}")
    console.print("\nRun it (add no flag but --jobs-dir or --max-retries):")
    console.print(f"  {escape(run_command(run_dir, answer['environment']))}", soft_wrap=True)
    console.print(
        "\nThen upload the job within 48 hours, from the run's folder, where the run "
        f"command left you ({escape(str(run_dir))}):"
    )
    upload = upload_command(url, answer["job_name"])
    console.print(f"  {escape(upload)}", soft_wrap=True)


def print_sharded(answer: dict[str, Any], run_dir: Path, url: str) -> None:
    shards = answer["shards"]
    console.print(
        f"[green]✓[/green] issued run {answer['run_id']} on {escape(answer['board'])} as entry "
        f"{escape(answer['submission'])}, in {len(shards)} shards; each shard's token is in "
        f"its folder and works until {answer['expires_at']}"
    )
    console.print("\nRun and upload each shard from its folder (add no flag but --jobs-dir "
                  "or --max-retries); the run counts once every shard is uploaded:")  # fmt: skip
    for shard in shards:
        where = run_dir / shard_folder(shard["index"])
        console.print(f"  shard {shard['index']} ({escape(', '.join(shard['tasks']))}):")
        console.print(f"    {escape(run_command(where, answer['environment']))}", soft_wrap=True)
        upload = upload_command(url, shard["job_name"])
        console.print(f"    {escape(upload)}", soft_wrap=True)


@app.command("list")
def list_runs(
    url: UrlOption,
    token_env: TokenEnvOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List your issued runs, newest first."""
    with handled():
        runs = service_for(url, token_env).call("GET", RUNS_PATH)["runs"]
    if as_json:
        console.print_json(data=runs)
        return
    if not runs:
        console.print("You have no issued runs.")
        return
    table = Table("run id", "board", "entry", "status", "expires", "job", "trials")
    for run in runs:
        execution = run.get("execution") or {}
        where, at_once = execution.get("environment", ""), execution.get("n_concurrent_trials", "")
        where = f"{where}, {at_once} at once"
        table.add_row(
            run["run_id"], run["board"], run["submission"], run["status"],
            run["expires_at"], run["job_name"], where,
        )  # fmt: skip
    console.print(table)


@app.command()
def abandon(
    run_id: Annotated[str, typer.Argument(help="The run's id, from `hbench runs list`.")],
    url: UrlOption,
    token_env: TokenEnvOption = None,
) -> None:
    """Abandon one of your runs waiting for upload; its slot on the board frees at once."""
    with handled():
        run = service_for(url, token_env).call(
            "POST", f"{RUNS_PATH}/{quote(run_id, safe='')}/abandon"
        )
    console.print(
        f"[green]✓[/green] abandoned run {run['run_id']} ({escape(run['board'])}, entry "
        f"{escape(run['submission'])}); its slot is free"
    )

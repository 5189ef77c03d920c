"""The client side of issued runs: the calls to `/api/local-runs`, and the run's folder.

The service answers refusals with one envelope (`detail`, `code`, `errors`); each
problem keeps the service's own rule code. The run token is written to a file only its
owner can read and is never printed: the commands shown read it from that file.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench.errors import HbenchError
from hbench.service import ServiceClient
from hbench.upload import RUN_TOKEN_HEADER

RUNS_PATH = "/api/local-runs"
UPLOADS_PATH = "/api/bench/uploads"
SPEC_FILE = "spec.json"
PROMPT_FILE = "prompt.j2"
TOKEN_FILE = "run-token"  # noqa: S105 - a file name, not a secret
RUN_FILE = "run.json"
JOBS_DIR = "jobs"  # where `hbench run` writes jobs when the spec names no `jobs_dir`
PRIVATE = 0o600


@dataclass(frozen=True)
class Service(ServiceClient):
    """The service's issued-runs endpoints (see `ServiceClient`)."""

    unreachable_code = "runs-unreachable"
    refused_code = "runs-refused"


def issue_body(
    *,
    agent: str,
    board: str | None = None,
    dataset: str | None = None,
    task_set: str | None = None,
    model: str | None = None,
    attempts: int | None = None,
    kwargs: dict[str, Any] | None = None,
    prompt_template: str | None = None,
    extra_instructions: list[str] | None = None,
    registry: str | None = None,
    hardware: dict[str, str] | None = None,
    environment: str | None = None,
    concurrent_trials: int | None = None,
    shards: int | None = None,
) -> dict[str, Any]:
    """The body of `POST /api/local-runs`, with only the fields given."""
    declarative: dict[str, Any] = {"agent": agent}
    if kwargs:
        declarative["kwargs"] = kwargs
    if prompt_template is not None:
        declarative["prompt_template"] = prompt_template
    if extra_instructions:
        declarative["extra_instructions"] = extra_instructions
    fields = {"arena": board, "dataset": dataset, "task_set": task_set, "model": model}
    body: dict[str, Any] = {key: value for key, value in fields.items() if value is not None}
    if attempts is not None:
        body["n_attempts"] = attempts
    body["declarative"] = declarative
    if registry is not None:
        body["registry"] = registry_source(registry)
    if hardware:
        body["hardware"] = hardware
    if environment is not None:
        body["environment"] = environment
    if concurrent_trials is not None:
        body["n_concurrent_trials"] = concurrent_trials
    if shards is not None and shards != 1:
        body["shards"] = shards
    return body


def registry_source(where: str) -> dict[str, str]:
    """A mirror by URL, or by path: made absolute, since the run starts in another folder."""
    if where.startswith("https://"):
        return {"url": where}
    return {"path": str(Path(where).expanduser().resolve())}


def parse_kwargs(
    text: str | None,
    *,
    option: str = "--kwargs",
    code: str = "runs-option-invalid",
    example: str = "'{\"temperature\": 0}'",
) -> dict[str, Any]:
    """The agent's options, given as a JSON object in `option`; refused with `code`."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HbenchError(code, f"{option} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise HbenchError(code, f"{option} must be a JSON object of options, such as {example}")
    return value


def parse_hardware(pairs: list[str]) -> dict[str, str]:
    """`--hardware KEY=VALUE`, repeated."""
    hardware: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            message = f"--hardware takes KEY=VALUE, such as gpu=A100, not {pair!r}"
            raise HbenchError("runs-option-invalid", message)
        hardware[key.strip()] = value.strip()
    return hardware


def read_template(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        message = f"can't read the prompt template {path}: {exc}"
        raise HbenchError("runs-option-invalid", message) from None


def check_folder_free(folder: Path) -> None:
    """Refuse a run folder that holds anything, before a run is issued for it."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        message = f"{folder} exists and is not an empty folder; pass another --dir"
        raise HbenchError("runs-folder-invalid", message)


def write_run_folder(folder: Path, answer: dict[str, Any]) -> None:
    """Write the spec, the template and the run's details; keep the token owner-only."""
    try:
        check_folder_free(folder)
        folder.mkdir(parents=True, exist_ok=True)
        write_new(folder / SPEC_FILE, json.dumps(answer["spec"], indent=2) + "\n")
        if answer.get("prompt_template") is not None:
            write_new(folder / PROMPT_FILE, answer["prompt_template"])
        hidden = {"token", "spec", "shards"}
        details = {key: value for key, value in answer.items() if key not in hidden}
        if answer.get("shards"):
            details["shards"] = [shard_details(shard) for shard in answer["shards"]]
        write_new(folder / RUN_FILE, json.dumps(details, indent=2) + "\n")
        if answer.get("token") is not None:
            write_new(folder / TOKEN_FILE, answer["token"] + "\n", mode=PRIVATE)
        for shard in answer.get("shards") or []:
            write_shard_folder(folder / shard_folder(shard["index"]), answer, shard)
    except (OSError, HbenchError) as exc:
        detail = exc.problems[0].message if isinstance(exc, HbenchError) else str(exc)
        message = (
            f"the run {answer['run_id']} was issued, but its folder could not be written "
            f"({detail}); abandon it with `hbench runs abandon {answer['run_id']}` and issue "
            "another with a new --dir"
        )
        raise HbenchError("runs-folder-invalid", message) from None


def shard_folder(index: int) -> str:
    """`shard-<i>`: where a sharded run's folder keeps shard i's spec and run token."""
    return f"shard-{index}"


def shard_details(shard: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in shard.items() if key not in {"token", "spec"}}


def write_shard_folder(folder: Path, answer: dict[str, Any], shard: dict[str, Any]) -> None:
    """A shard's folder: its spec, the run's template, its details and its run token, as an
    unsharded run's folder holds them, so it is run and uploaded the same way."""
    folder.mkdir()
    write_new(folder / SPEC_FILE, json.dumps(shard["spec"], indent=2) + "\n")
    if answer.get("prompt_template") is not None:
        write_new(folder / PROMPT_FILE, answer["prompt_template"])
    details = {**shard_details(shard), "parent_run_id": answer["run_id"], "board": answer["board"]}
    write_new(folder / RUN_FILE, json.dumps(details, indent=2) + "\n")
    write_new(folder / TOKEN_FILE, shard["token"] + "\n", mode=PRIVATE)


def write_new(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Create a file that must not exist yet; `mode` applies from its creation on, so the
    run token is never readable by others, not even for a moment."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(text)


def run_command(folder: Path, environment: list[dict[str, Any]]) -> str:
    """`cd <folder> && VAR=value … hbench run --config spec.json`, for a POSIX shell."""
    assignments = [
        f"{v['name']}={shlex.quote(v['value'])}"
        for v in environment
        if v.get("value") is not None and not v.get("secret")
    ]
    return " ".join(["cd", shlex.quote(str(folder)), "&&", *assignments, "hbench", "run",
                     "--config", SPEC_FILE])  # fmt: skip


def upload_command(service_url: str, job_name: str) -> str:
    """The upload, reading the run token from its file: the token is never on screen.

    Run in the run's folder, where the run command's `cd` leaves the shell, so the two
    lines work pasted one after the other. `export … &&` sets the variable before the
    second command is expanded; a plain `VAR=… cmd "$VAR"` would expand it before.
    """
    token_file = shlex.quote(TOKEN_FILE)
    job = shlex.quote(f"{JOBS_DIR}/{job_name}")
    url = shlex.quote(service_url.rstrip("/") + UPLOADS_PATH)
    header = f'"{RUN_TOKEN_HEADER}: $HPG_RUN_TOKEN"'
    return (
        f'export HPG_RUN_TOKEN="$(cat {token_file})" && '
        f"hbench jobs upload --url {url} -H {header} {job}"
    )

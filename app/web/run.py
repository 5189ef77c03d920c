"""Run a benchmark (`/run`): pick a board or a benchmark, task set and model, an agent and
its options, and issue the run. The answer is a page showing the run token once, and the
commands that run the spec and upload the job."""

from __future__ import annotations

import json
import secrets
import shlex
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from app.errors import validation_problems
from app.registry import RegistryDep
from app.runs import service
from app.runs.lookup import is_runnable
from app.runs.policy import DOCKER
from app.runs.schemas import IssueRequest
from app.runs.spec import execution_of
from app.web.pages import PageDep
from hbench.errors import HbenchError, Problem
from hbench.issue import JOBS_DIR, PROMPT_FILE, SPEC_FILE, UPLOADS_PATH
from hbench.sandbox import IMPORT_PATH
from hbench.upload import RUN_TOKEN_HEADER
from registry.loader import Registry

router = APIRouter(include_in_schema=False)

INSTRUCTION_BREAK = "---"
"""A line holding only this separates the passages of the extra-instructions field."""


@dataclass(frozen=True)
class BoardChoice:
    slug: str
    title: str
    agents: list[str]
    attempts: list[int]
    max_concurrent_trials: int = 4


def board_choices(registry: Registry) -> list[BoardChoice]:
    """The boards runs can be issued on, with the agents their model allows."""
    choices = []
    for board in sorted(registry.boards.values(), key=lambda b: b.slug):
        model = registry.models.get(board.model)
        if model is None or not is_runnable(board, registry):
            continue
        choices.append(
            BoardChoice(
                board.slug,
                board.title or board.slug,
                list(model.agents),
                list(board.attempts),
                board.max_concurrent_trials,
            )
        )
    return choices


@dataclass(frozen=True)
class EnvironmentChoice:
    value: str
    label: str


def environment_choices(registry: Registry) -> list[EnvironmentChoice]:
    """Where the trials may run: the board's first environment (Harbor's docker one unless
    its policy says otherwise), the other Harbor environment types some board's policy
    allows (remote sandboxes), each named with its boards, and the environment classes some
    benchmark allows besides (the demo's sandbox), each named with its benchmarks."""
    choices = [EnvironmentChoice("", "The board's default: Harbor's docker environment")]
    types: dict[str, list[str]] = {}
    for board in sorted(registry.boards.values(), key=lambda b: b.slug):
        for environment in board.environments:
            if environment != DOCKER or board.environments[0] != DOCKER:
                types.setdefault(environment, []).append(board.slug)
    for environment, slugs in sorted(types.items()):
        choices.append(EnvironmentChoice(environment, f"{environment} ({', '.join(slugs)} only)"))
    allowed: dict[str, list[str]] = {}
    for benchmark in sorted(registry.benchmarks.values(), key=lambda b: b.slug):
        for environment in benchmark.custom_environments:
            allowed.setdefault(environment, []).append(benchmark.slug)
    for environment, slugs in sorted(allowed.items()):
        name = "hbench's sandbox, no Docker needed" if environment == IMPORT_PATH else environment
        choices.append(EnvironmentChoice(environment, f"{name} ({', '.join(slugs)} only)"))
    return choices


def form_context(registry: Registry, fields: dict[str, str]) -> dict[str, Any]:
    agents = sorted({agent for model in registry.models.values() for agent in model.agents})
    return {
        "title": "Run a benchmark",
        "boards": board_choices(registry),
        "environments": environment_choices(registry),
        "agents": agents,
        "models": sorted(registry.models),
        "fields": fields,
    }


@router.get("/run", response_class=HTMLResponse)
def run_form(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    return page.render("run.html", **form_context(registry, {}))


@router.post("/run", response_class=HTMLResponse)
async def issue(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    fields = await page.form()
    account = page.signed_in.account
    try:
        request = issue_request(fields)
        issued = service.issue_run(
            page.session,
            account,
            request,
            registry=registry,
            lifetime=page.settings.run_token_lifetime,
            now=page.now,
        )
    except HbenchError as error:
        return page.refused(error, "run.html", **form_context(registry, fields))
    run = issued.run
    job_name = str(run.spec["job_name"])
    environment = [vars(variable) for variable in issued.environment]
    return page.render(
        "issued.html",
        title="Your run is issued",
        run=run,
        job_name=job_name,
        token=issued.token,
        spec_text=json.dumps(run.spec, indent=2),
        execution=execution_of(run.spec),
        environment=environment,
        run_command=run_it_command(job_name, run.spec, issued.prompt_template, environment),
        upload_command=upload_command(page.service_url, job_name),
    )


def issue_request(fields: dict[str, str]) -> IssueRequest:
    """The form as the body `POST /api/local-runs` takes, checked by the same model."""
    problems: list[Problem] = []
    kwargs = parse_kwargs(fields.get("kwargs", ""), problems)
    hardware = parse_hardware(fields.get("hardware", ""), problems)
    declarative: dict[str, Any] = {"agent": fields.get("agent", ""), "kwargs": kwargs}
    template = fields.get("prompt_template", "").strip()
    if template:
        declarative["prompt_template"] = fields["prompt_template"]
    instructions = split_passages(fields.get("extra_instructions", ""))
    if instructions:
        declarative["extra_instructions"] = instructions
    body: dict[str, Any] = {"declarative": declarative, "hardware": hardware}
    for name, key in (("arena", "board"), ("dataset", "dataset"), ("task_set", "task_set"),
                      ("model", "model")):  # fmt: skip
        value = fields.get(key, "").strip()
        if value:
            body[name] = value
    environment = fields.get("environment", "").strip()
    if environment:
        body["environment"] = environment
    concurrent = fields.get("n_concurrent_trials", "").strip()
    if concurrent and not concurrent.isdigit():
        message = "trials at once must be a whole number, such as 8"
        problems.append(Problem("request-invalid", message, "n_concurrent_trials"))
    elif concurrent:
        body["n_concurrent_trials"] = int(concurrent)
    attempts = fields.get("n_attempts", "1").strip() or "1"
    if not attempts.isdigit():
        problems.append(Problem("request-invalid", "attempts must be 1 or 3", "n_attempts"))
    else:
        body["n_attempts"] = int(attempts)
    if problems:
        raise HbenchError.from_problems(problems)
    try:
        return IssueRequest.model_validate(body)
    except ValidationError as error:
        raise HbenchError.from_problems(validation_problems(error.errors())) from None


def parse_kwargs(text: str, problems: list[Problem]) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        problems.append(Problem("request-invalid", f"the options are not JSON: {error}", "kwargs"))
        return {}
    if not isinstance(value, dict):
        message = 'the options must be a JSON object, such as {"temperature": 0}'
        problems.append(Problem("request-invalid", message, "kwargs"))
        return {}
    return value


def parse_hardware(text: str, problems: list[Problem]) -> dict[str, str]:
    hardware = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            message = f"hardware takes one KEY=VALUE a line, such as gpu=A100, not {line!r}"
            problems.append(Problem("request-invalid", message, "hardware"))
            continue
        hardware[key.strip()] = value.strip()
    return hardware


def split_passages(text: str) -> list[str]:
    """Passages separated by lines holding only `---`; blank ones dropped."""
    passages: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == INSTRUCTION_BREAK:
            passages.append("\n".join(current))
            current = []
        else:
            current.append(line)
    passages.append("\n".join(current))
    return [p.strip("\n") for p in passages if p.strip()]


def heredoc(path: str, text: str) -> str:
    """`cat > path <<'MARK'` … `MARK`, with a mark the text does not hold."""
    mark = "HBENCH_EOF"
    while mark in text:
        mark = f"HBENCH_EOF_{secrets.token_hex(4).upper()}"
    body = text if text.endswith("\n") else text + "\n"
    return f"cat > {path} <<'{mark}'\n{body}{mark}"


def run_it_command(
    job_name: str, spec: dict[str, Any], template: str | None, environment: list[dict[str, Any]]
) -> str:
    """Make the run's folder, write its files, and run the spec as it is."""
    folder = shlex.quote(f"runs/{job_name}")
    lines = [f"mkdir -p {folder} && cd {folder}", heredoc(SPEC_FILE, json.dumps(spec, indent=2))]
    if template is not None:
        lines.append(heredoc(PROMPT_FILE, template))
    assignments = [
        f"{v['name']}={shlex.quote(v['value'])}"
        for v in environment
        if v.get("value") is not None and not v.get("secret")
    ]
    lines.append(" ".join([*assignments, "hbench", "run", "--config", SPEC_FILE]))
    return "\n".join(lines)


def upload_command(service_url: str, job_name: str) -> str:
    """The upload from the run's folder, reading the run token from `HPG_RUN_TOKEN`."""
    url = shlex.quote(service_url + UPLOADS_PATH)
    job = shlex.quote(f"{JOBS_DIR}/{job_name}")
    return f'hbench jobs upload --url {url} -H "{RUN_TOKEN_HEADER}: $HPG_RUN_TOKEN" {job}'

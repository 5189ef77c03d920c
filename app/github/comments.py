"""The comment-command behaviour: `/hbench …` in a new issue or pull-request comment.

Who is speaking is checked before what was said: only `created` comments by people are
read (edits could smuggle a command into an old comment; bots, ours included, are
ignored). A comment holding commands gets an `eyes` reaction at once, then `rocket` when
every command succeeded or `confused` when one did not. The answer is one comment per
thread, marked `<!-- hbench:reply -->` and edited in place for each new command.

Commands run through a table. `help` and `status` are always in it; `publish`,
`withdraw` and `delete` join it when `JobActions` are provided (`app.github.jobs`; the
service's are publishing's, `app.github.publishing`), and without them are answered
`command-unavailable`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.db.session import Database
from app.github.commands import (
    COMMANDS,
    Command,
    CommandError,
    Delete,
    Parsed,
    Publish,
    Status,
    Withdraw,
    clip,
    parse_comment_lines,
)
from app.github.events import IssueCommentEvent
from app.github.jobs import (
    ActionRequest,
    JobActions,
    JobFacts,
    own_jobs,
    resolve_job,
)
from app.github.models import GitHubUser, Reaction, Repo
from app.github.permissions import authorize_job_action
from app.github.routing import Context, Event, EventRouter
from hbench.errors import HbenchError

log = logging.getLogger(__name__)

MARKER = "<!-- hbench:reply -->"
RECEIVED: Reaction = "eyes"
DONE: Reaction = "rocket"
FAILED: Reaction = "confused"

router = EventRouter()


@dataclass(frozen=True)
class CommandRequest:
    """A command, with who asked, where, and what the handler acts through."""

    author: GitHubUser
    repo: Repo
    repository_id: int
    issue_number: int
    delivery_id: str
    context: Context


@dataclass(frozen=True)
class Outcome:
    """How one command went: the reply's text for it, and the rule code if it failed."""

    line: str
    text: str
    code: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is None


Handler = Callable[[CommandRequest, Command], Awaitable[str]]


@router.register("issue_comment", "created")
async def on_comment(event: Event, context: Context) -> None:
    try:
        parsed = IssueCommentEvent.model_validate(event.payload)
    except ValidationError as error:
        log.warning("issue_comment delivery %s unreadable: %s", event.delivery_id, error)
        return
    if not from_a_person(parsed, context.settings.github_app_id):
        return
    commands = parse_comment_lines(parsed.comment.body or "")
    if not commands:
        return
    request = CommandRequest(
        author=parsed.comment.user.user(),
        repo=parsed.repository.repo,
        repository_id=parsed.repository.id,
        issue_number=parsed.issue.number,
        delivery_id=event.delivery_id,
        context=context,
    )
    github = context.github
    await github.react(request.repo, parsed.comment.id, RECEIVED)
    table = handlers(context.job_actions)
    outcomes = [await run_command(line, command, request, table) for line, command in commands]
    await reply(request, render_reply(request.author, outcomes))
    failed = any(not outcome.ok for outcome in outcomes)
    await github.react(request.repo, parsed.comment.id, FAILED if failed else DONE)


def from_a_person(event: IssueCommentEvent, app_id: int | None) -> bool:
    """Whether a comment was written by a person (not a bot, nor an App such as ours)."""
    author = event.comment.user
    if author.type == "Bot" or author.login.endswith("[bot]"):
        return False
    app = event.comment.performed_via_github_app
    return app is None or app.id != app_id


def handlers(job_actions: JobActions | None) -> dict[str, Handler]:
    """The commands this service acts on, by name."""
    table: dict[str, Handler] = {"help": show_help, "status": show_status}
    if job_actions is not None:
        table |= job_action_handlers(job_actions)
    return table


async def run_command(
    line: str, parsed: Parsed, request: CommandRequest, table: dict[str, Handler]
) -> Outcome:
    if isinstance(parsed, CommandError):
        return Outcome(line, parsed.message, parsed.code)
    handler = table.get(parsed.name)
    if handler is None:
        return Outcome(
            line,
            f"this service does not take `/hbench {parsed.name}` yet; use the service's "
            "web pages or its API for now",
            "command-unavailable",
        )
    try:
        return Outcome(line, await handler(request, parsed))
    except HbenchError as error:
        return Outcome(line, error.problems[0].message, error.code)
    except Exception:
        log.exception("/hbench %s failed (delivery %s)", parsed.name, request.delivery_id)
        return Outcome(line, "the service failed while acting on this command", "internal-error")


async def show_help(request: CommandRequest, _command: Command) -> str:
    available = handlers(request.context.job_actions)
    lines = ["The commands, one per line of a comment:", ""]
    for spec in COMMANDS.values():
        later = "" if spec.name in available else " *(not available on this service yet)*"
        lines.append(f"- `{spec.usage}`: {spec.summary}{later}")
    return "\n".join(lines)


async def show_status(request: CommandRequest, command: Command) -> str:
    assert isinstance(command, Status)  # noqa: S101  # the table maps "status" here
    database = request.context.database
    if command.job is None:
        jobs = await run_in_threadpool(read_own_jobs, database, request.author.id)
        if not jobs:
            return f"@{request.author.login} has no jobs on hbench yet."
        return "Your newest jobs:\n\n" + "\n".join(f"- {describe(job)}" for job in jobs)
    job = await run_in_threadpool(read_job, database, command, request)
    await authorize_job_action(
        request.context.github, job, request.author, request.repo, request.repository_id
    )
    return describe(job, detail=True)


def read_own_jobs(database: Database, github_id: int) -> list[JobFacts]:
    with database.session() as session:
        return own_jobs(session, github_id)


def read_job(
    database: Database, command: Status | Publish | Withdraw | Delete, request: CommandRequest
) -> JobFacts:
    assert command.job is not None  # noqa: S101  # callers name a job
    with database.session() as session:
        return resolve_job(session, command.job, request.author.id, request.repository_id)


def describe(job: JobFacts, *, detail: bool = False) -> str:
    where = f" on `{job.board}`" if job.board else ""
    text = f"`{job.name}` ({job.id}): **{job.status}**{where}"
    if not detail:
        return text
    lines = [
        text,
        f"- uploaded {job.uploaded_at:%Y-%m-%d %H:%M} UTC",
        f"- checks: {job.checks_passed} of {job.checks_total} passed",
    ]
    if job.workflow_repository:
        lines.append(f"- run by a workflow of {job.workflow_repository}")
    return "\n".join(lines)


def job_action_handlers(actions: JobActions) -> dict[str, Handler]:
    """`publish`, `withdraw` and `delete`: find the job, check who asks, then act."""

    async def act(request: CommandRequest, command: Command) -> str:
        assert isinstance(command, Publish | Withdraw | Delete)  # noqa: S101  # by the table
        job = await run_in_threadpool(read_job, request.context.database, command, request)
        github = request.context.github
        await authorize_job_action(github, job, request.author, request.repo, request.repository_id)
        asked = ActionRequest(
            job=job,
            actor=request.author,
            repository=request.repo,
            delivery_id=request.delivery_id,
            board=command.board if isinstance(command, Publish) else None,
        )
        if isinstance(command, Publish):
            return await actions.publish(asked)
        if isinstance(command, Withdraw):
            return await actions.withdraw(asked)
        return await actions.delete(asked)

    return {"publish": act, "withdraw": act, "delete": act}


def render_reply(author: GitHubUser, outcomes: list[Outcome]) -> str:
    """The reply comment: the marker, then each command and how it went."""
    parts = [MARKER, f"@{author.login}"]
    for outcome in outcomes:
        mark = "✅" if outcome.ok else "❌"
        text = outcome.text if outcome.ok else f"{outcome.text} (`{outcome.code}`)"
        parts.append(f"{mark} {clip(outcome.line, 100)}\n\n{text}")
    parts.append("<sub>`/hbench help` lists the commands.</sub>")
    return "\n\n".join(parts)


async def reply(request: CommandRequest, body: str) -> None:
    """Edit our reply in this thread, or post it if there is none yet."""
    github = request.context.github
    existing = await github.find_marked_comment(request.repo, request.issue_number, MARKER)
    if existing is None:
        await github.create_comment(request.repo, request.issue_number, body)
    else:
        await github.edit_comment(request.repo, existing.id, body)

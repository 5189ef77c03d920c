"""The registry pull-request check: on a pull request to the data repository that changes
registry files, the same checks as `hbench registry check` (`registry.check`), run on the
pull request's head and shown as a completed check run, `hbench registry check`.

The head's registry files are read through GitHub's API (the commit's tree, then each
file's blob), never by checking out the pull request's code, which may come from a fork
and is not trusted: it is parsed as data and nothing of it runs. Pull requests to other
repositories, and those that leave the registry alone, get no check run.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from app.github.events import PullRequestEvent
from app.github.models import CheckRun, Repo
from app.github.port import GitHubPort
from app.github.routing import Context, Event, EventRouter
from hbench.errors import Problem
from registry.check import check_files
from registry.datarepo.layout import REGISTRY
from registry.loader import KINDS, PRICES

log = logging.getLogger(__name__)

CHECK_NAME = "hbench registry check"
PREFIX = f"{REGISTRY}/"
MAX_FILES = 1000  # far more than a registry holds; past it, the check refuses to read on
MAX_SUMMARY = 60_000  # GitHub takes at most 65,535 characters of a check run's summary

router = EventRouter()


@router.register("pull_request", "opened", "synchronize", "reopened")
async def check_registry_pull_request(event: Event, context: Context) -> None:
    try:
        parsed = PullRequestEvent.model_validate(event.payload)
    except ValidationError as error:
        log.warning("pull_request delivery %s unreadable: %s", event.delivery_id, error)
        return
    wanted = context.settings.data_repository
    if wanted is None or parsed.repository.full_name.lower() != wanted.lower():
        return
    repo, github = parsed.repository.repo, context.github
    changed = await github.pull_request_files(repo, parsed.number)
    if not any(path.startswith(PREFIX) for path in changed):
        return
    head = parsed.pull_request.head.sha
    problems = await head_problems(github, repo, head)
    await github.create_check_run(repo, check_run(head, problems))


def is_registry_file(path: str) -> bool:
    """Whether a path in the data repository is one `hbench registry check` reads."""
    if not path.startswith(PREFIX):
        return False
    inside = path.removeprefix(PREFIX)
    if inside == PRICES:
        return True
    kind, slash, name = inside.partition("/")
    return kind in KINDS and bool(slash) and "/" not in name and name.endswith(".json")


async def head_problems(github: GitHubPort, repo: Repo, head: str) -> list[Problem]:
    """Every problem of the registry as the commit `head` has it."""
    tree = await github.tree(repo, head)
    wanted = sorted(path for path in tree.files if is_registry_file(path))
    if tree.truncated or len(wanted) > MAX_FILES:
        return [
            Problem(
                "registry-too-many-files",
                f"the pull request's head has more files than the check reads (at most "
                f"{MAX_FILES} registry files); split the change or trim the registry",
            )
        ]
    files = {}
    for path in wanted:
        content = await github.blob(repo, tree.files[path])
        files[path.removeprefix(PREFIX)] = content.decode("utf-8", errors="replace")
    return check_files(files)


def check_run(head: str, problems: list[Problem]) -> CheckRun:
    """The check run for a head: success, or failure listing every problem with its code."""
    if not problems:
        return CheckRun(
            name=CHECK_NAME,
            head_sha=head,
            conclusion="success",
            title="The registry passes every check",
            summary="`hbench registry check` finds no problem in this pull request's registry.",
        )
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    lines = [
        f"`hbench registry check` finds {count} in this pull request's registry; each is "
        "explained, with its fix, in docs/rule-codes.md under its code.",
        "",
    ]
    lines += [describe(problem) for problem in problems]
    return CheckRun(
        name=CHECK_NAME,
        head_sha=head,
        conclusion="failure",
        title=f"The registry has {count}",
        summary=clip("\n".join(lines), MAX_SUMMARY),
    )


def describe(problem: Problem) -> str:
    return f"- `{problem.code}`: {problem.message}"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 40].rsplit("\n", 1)[0] + "\n- … and more; run it locally for all."

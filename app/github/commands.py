"""The comment-command parser: `/hbench <command> [args]` lines in a comment, as commands.

Pure: text in, commands (or refusals, each with its rule code) out; it never raises.
A command is a line of its own that starts with `/hbench` (up to three spaces before
it, as Markdown still reads that as a paragraph); lines in fenced code blocks and quoted
lines (`> /hbench …`) are not commands. Arguments are split like a shell's (`shlex`), so
quotes work. `docs/github-app.md` documents every command in `COMMANDS`, and a test
holds the two together.
"""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass
from typing import ClassVar

PREFIX = "/hbench"
MAX_COMMANDS = 10
COMMAND_LINE = re.compile(r"^ {0,3}/hbench(?:[ \t]+(?P<rest>.*?))?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
JOB_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
BOARD_NAME = re.compile(r"^[A-Za-z0-9._-]{1,200}$")

CODES: frozenset[str] = frozenset(
    {"command-unknown", "command-usage", "command-job-invalid", "command-too-many"}
)


@dataclass(frozen=True)
class CommandSpec:
    """A command as people read about it: its usage line and what it does."""

    name: str
    usage: str
    summary: str


COMMANDS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in (
        CommandSpec(
            "publish",
            "/hbench publish <job> [--board B]",
            "Publish one of your jobs to its board (name the board when it fits several).",
        ),
        CommandSpec("withdraw", "/hbench withdraw <job>", "Withdraw a published job, for good."),
        CommandSpec("delete", "/hbench delete <job>", "Delete a job's files."),
        CommandSpec(
            "status", "/hbench status [<job>]", "Show your jobs, or one job's status and checks."
        ),
        CommandSpec("help", "/hbench help", "Show the commands."),
    )
}


@dataclass(frozen=True)
class JobRef:
    """A job named in a command: by its name, or by its id (a UUID)."""

    text: str

    @property
    def id(self) -> uuid.UUID | None:
        try:
            return uuid.UUID(self.text)
        except ValueError:
            return None


@dataclass(frozen=True)
class Publish:
    name: ClassVar[str] = "publish"
    job: JobRef
    board: str | None = None


@dataclass(frozen=True)
class Withdraw:
    name: ClassVar[str] = "withdraw"
    job: JobRef


@dataclass(frozen=True)
class Delete:
    name: ClassVar[str] = "delete"
    job: JobRef


@dataclass(frozen=True)
class Status:
    name: ClassVar[str] = "status"
    job: JobRef | None = None


@dataclass(frozen=True)
class Help:
    name: ClassVar[str] = "help"


Command = Publish | Withdraw | Delete | Status | Help


@dataclass(frozen=True)
class CommandError:
    """A command line that could not be read: its rule code, why, and the line."""

    code: str
    message: str
    line: str


Parsed = Command | CommandError


def parse_comment(text: str) -> list[Parsed]:
    """Every command in a comment, in order; more than `MAX_COMMANDS` are refused."""
    return [parsed for _, parsed in parse_comment_lines(text)]


def parse_comment_lines(text: str) -> list[tuple[str, Parsed]]:
    """Every command line in a comment, with what it parses to."""
    lines = command_lines(text)
    parsed: list[tuple[str, Parsed]] = [(line, parse_line(line)) for line in lines[:MAX_COMMANDS]]
    for line in lines[MAX_COMMANDS:]:
        message = f"a comment may hold at most {MAX_COMMANDS} commands; send the rest in another"
        parsed.append((line, CommandError("command-too-many", message, line)))
    return parsed


def command_lines(text: str) -> list[str]:
    """The lines of a comment that are commands, outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and COMMAND_LINE.match(line):
            lines.append(line.strip())
    return lines


def parse_line(line: str) -> Parsed:
    """One command line (`/hbench …`) as a command, or the refusal that says why not."""
    match = COMMAND_LINE.match(line)
    if match is None:
        return CommandError("command-usage", f"a command starts with {PREFIX}", line)
    rest = match.group("rest") or ""
    try:
        words = shlex.split(rest)
    except ValueError as error:
        return CommandError("command-usage", f"the arguments can't be read: {error}", line)
    if not words:
        return Help()
    name, args = words[0].lower(), words[1:]
    parser = PARSERS.get(name)
    if parser is None:
        known = ", ".join(COMMANDS)
        return CommandError(
            "command-unknown",
            f"{PREFIX} {clip(words[0])} is not a command; the commands are {known}",
            line,
        )
    return parser(args, line)


def parse_publish(args: list[str], line: str) -> Parsed:
    board: str | None = None
    positional: list[str] = []
    words = iter(args)
    for word in words:
        if word == "--board":
            board = next(words, None)
            if board is None:
                return usage("publish", "--board needs a board's name", line)
        elif word.startswith("--board="):
            board = word.removeprefix("--board=")
        elif word.startswith("-"):
            return usage("publish", f"{clip(word)} is not an option of publish", line)
        else:
            positional.append(word)
    if len(positional) != 1:
        return usage("publish", "name one job", line)
    if board is not None and not BOARD_NAME.fullmatch(board):
        return usage("publish", f"{clip(board)} is not a board's name", line)
    job = job_ref(positional[0], line)
    return job if isinstance(job, CommandError) else Publish(job, board)


def parse_withdraw(args: list[str], line: str) -> Parsed:
    job = one_job("withdraw", args, line)
    return job if isinstance(job, CommandError) else Withdraw(job)


def parse_delete(args: list[str], line: str) -> Parsed:
    job = one_job("delete", args, line)
    return job if isinstance(job, CommandError) else Delete(job)


def parse_status(args: list[str], line: str) -> Parsed:
    if not args:
        return Status()
    job = one_job("status", args, line)
    return job if isinstance(job, CommandError) else Status(job)


def parse_help(args: list[str], line: str) -> Parsed:
    return usage("help", "help takes no arguments", line) if args else Help()


def one_job(command: str, args: list[str], line: str) -> JobRef | CommandError:
    if len(args) != 1 or args[0].startswith("-"):
        return usage(command, "name one job", line)
    return job_ref(args[0], line)


def job_ref(text: str, line: str) -> JobRef | CommandError:
    if JOB_NAME.fullmatch(text) or is_uuid(text):
        return JobRef(text)
    return CommandError(
        "command-job-invalid",
        f"{clip(text)} is not a job's name (letters, digits, '.', '_' and '-', at most 64) or id",
        line,
    )


def is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def usage(command: str, problem: str, line: str) -> CommandError:
    return CommandError("command-usage", f"{problem}; usage: {COMMANDS[command].usage}", line)


def clip(text: str, limit: int = 40) -> str:
    """Part of someone's text, quoted in a reply: short, on one line, no Markdown."""
    flat = " ".join(text.split())
    shown = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    return "`" + shown.replace("`", "'") + "`"


PARSERS = {
    "publish": parse_publish,
    "withdraw": parse_withdraw,
    "delete": parse_delete,
    "status": parse_status,
    "help": parse_help,
}

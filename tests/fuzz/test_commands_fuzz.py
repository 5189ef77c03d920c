"""Fuzzing the comment-command parser: any comment parses to commands or refusals with a
rule code, never an exception; and a command written out in any of the ways people
write it (spacing, case, quoting, text around it) parses back to itself."""

from __future__ import annotations

import shlex
import uuid

from hypothesis import assume, event, given
from hypothesis import strategies as st

from app.github.commands import (
    CODES,
    MAX_COMMANDS,
    Command,
    CommandError,
    Delete,
    Help,
    JobRef,
    Publish,
    Status,
    Withdraw,
    command_lines,
    parse_comment,
    parse_line,
)
from hbench.codes import CODE_NAMES

from .conftest import fuzz_settings

NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
JOB_NAME = st.text(NAME_CHARS, min_size=1, max_size=64).filter(lambda s: not s.startswith("-"))
BOARD = st.text(NAME_CHARS, min_size=1, max_size=60)
JOB = st.one_of(JOB_NAME, st.uuids().map(str)).map(JobRef)
COMMAND: st.SearchStrategy[Command] = st.one_of(
    st.builds(Publish, JOB, st.none() | BOARD),
    st.builds(Withdraw, JOB),
    st.builds(Delete, JOB),
    st.builds(Status, st.none() | JOB),
    st.just(Help()),
)
SPACE = st.sampled_from([" ", "  ", "\t", " \t "])
ANY_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400
)  # every code point a comment can hold: line and paragraph separators, NUL, RTL marks
WORDS = st.lists(
    st.sampled_from(["/hbench", "publish", "withdraw", "delete", "status", "help", "--board",
                     "--board=", "'", '"', "\\", "```", "~~~", ">", "\n", "\r\n", "\u2028",
                     "job-1", str(uuid.UUID(int=7)), "é", "`", "-x", "\x00", "  "]),
    max_size=30,
).map(" ".join)  # fmt: skip


def assert_well_formed(parsed: list[Command | CommandError], text: str) -> None:
    assert len(parsed) == len(command_lines(text))
    for index, item in enumerate(parsed):
        if isinstance(item, CommandError):
            assert item.code in CODES and item.code in CODE_NAMES
            assert (item.code == "command-too-many") == (index >= MAX_COMMANDS)
            # A refusal is quoted back in a reply: one line, whatever was sent.
            assert "\n" not in item.message and "\r" not in item.message
            event(item.code)
        else:
            assert index < MAX_COMMANDS
            event(item.name)


@fuzz_settings(200)
@given(text=st.one_of(ANY_TEXT, WORDS, WORDS.map(lambda w: "/hbench " + w)))
def test_fuzz_any_comment_parses_to_commands_or_refusals(text: str) -> None:
    assert_well_formed(parse_comment(text), text)


@fuzz_settings(200)
@given(line=st.one_of(ANY_TEXT, WORDS))
def test_fuzz_any_single_line_is_a_command_or_a_refusal(line: str) -> None:
    parsed = parse_line(line)
    assert isinstance(parsed, CommandError | Publish | Withdraw | Delete | Status | Help)
    if isinstance(parsed, CommandError):
        assert parsed.code in CODES and parsed.line == line


@fuzz_settings(20, most=300)  # each case is up to 100 KB of comment
@given(
    size=st.integers(10_000, 100_000),
    shape=st.sampled_from(["word", "quote", "lines", "fences", "args"]),
)
def test_fuzz_huge_comments_are_parsed_whole(size: int, shape: str) -> None:
    text = {
        "word": "/hbench publish " + "a" * size,
        "quote": "/hbench publish '" + "x" * size,
        "lines": "/hbench status\n" * (size // 15),
        "fences": "```\n/hbench help\n" * (size // 18),
        "args": "/hbench publish " + "--board b " * (size // 10),
    }[shape]
    assert_well_formed(parse_comment(text), text)


def render(command: Command, quote: bool, upper: bool) -> str:
    """A command line as a person might type it."""
    words = [command.name.upper() if upper else command.name]
    job = getattr(command, "job", None)
    if job is not None:
        words.append(job.text)
    board = getattr(command, "board", None)
    if board is not None:
        words += ["--board", board]
    return "/hbench " + " ".join(shlex.quote(w) if not quote else f"'{w}'" for w in words)


@fuzz_settings(200)
@given(
    command=COMMAND,
    quote=st.booleans(),
    upper=st.booleans(),
    indent=st.sampled_from(["", " ", "   "]),
    space=SPACE,
    before=st.lists(ANY_TEXT, max_size=3),
    after=st.lists(ANY_TEXT, max_size=3),
)
def test_fuzz_a_written_command_parses_back_to_itself(
    *, command: Command, quote: bool, upper: bool, indent: str, space: str,
    before: list[str], after: list[str],
) -> None:  # fmt: skip
    line = indent + render(command, quote, upper).replace(" ", space, 1)
    around = [*before, *after]
    # Text around the command: anything that is neither a command nor a code fence.
    assume(not any(command_lines(text) or "```" in text or "~~~" in text for text in around))
    text = "\n".join([*before, line, *after])
    assert parse_comment(text) == [command]


@fuzz_settings(100)
@given(command=COMMAND, fence=st.sampled_from(["```", "~~~", "```python"]), quote=st.booleans())
def test_fuzz_commands_in_code_blocks_or_quotes_are_not_commands(
    command: Command, fence: str, quote: bool
) -> None:
    line = render(command, quote=False, upper=False)
    text = f"> {line}" if quote else f"{fence}\n{line}\n{fence[:3]}"
    assert parse_comment(text) == []

"""The comment-command parser: what it reads, what it refuses (with which code), and that
no text makes it crash."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.github.commands import (
    CODES,
    COMMANDS,
    MAX_COMMANDS,
    CommandError,
    Delete,
    Help,
    JobRef,
    Parsed,
    Publish,
    Status,
    Withdraw,
    parse_comment,
    parse_line,
)
from hbench.codes import CODE_NAMES

JOB_ID = "0b7e3f5c-8f1a-4a51-9f7e-2d7c1f3a9b10"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/hbench publish my-job", Publish(JobRef("my-job"))),
        (
            "/hbench publish my-job --board swe-bench-gpt-5",
            Publish(JobRef("my-job"), "swe-bench-gpt-5"),
        ),
        ("/hbench publish --board=b1 my.job_2", Publish(JobRef("my.job_2"), "b1")),
        ("/hbench publish 'my-job'", Publish(JobRef("my-job"))),
        (f"/hbench publish {JOB_ID}", Publish(JobRef(JOB_ID))),
        ("/hbench withdraw my-job", Withdraw(JobRef("my-job"))),
        ("/hbench delete my-job", Delete(JobRef("my-job"))),
        ("/hbench status", Status()),
        ("/hbench status my-job", Status(JobRef("my-job"))),
        ("/hbench help", Help()),
        ("/hbench", Help()),
        ("/hbench HELP", Help()),
        ("  /hbench\tstatus  ", Status()),
    ],
)
def test_commands_are_read(line: str, expected: Parsed) -> None:
    assert parse_line(line) == expected


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("/hbench publsh my-job", "command-unknown"),
        ("/hbench publish", "command-usage"),
        ("/hbench publish a b", "command-usage"),
        ("/hbench publish my-job --board", "command-usage"),
        ("/hbench publish my-job --force", "command-usage"),
        ("/hbench publish my-job --board 'no spaces'", "command-usage"),
        ("/hbench withdraw", "command-usage"),
        ("/hbench delete a b", "command-usage"),
        ("/hbench delete --yes", "command-usage"),
        ("/hbench status a b", "command-usage"),
        ("/hbench help me", "command-usage"),
        ("/hbench publish 'unclosed", "command-usage"),
        ("/hbench publish ../etc/passwd", "command-job-invalid"),
        ("/hbench publish " + "a" * 65, "command-job-invalid"),
        ("/hbench status job;rm", "command-job-invalid"),
    ],
)
def test_malformed_commands_are_refused_with_their_code(line: str, code: str) -> None:
    parsed = parse_line(line)
    assert isinstance(parsed, CommandError)
    assert parsed.code == code
    assert parsed.line == line


def test_a_usage_refusal_quotes_the_usage() -> None:
    parsed = parse_line("/hbench publish")
    assert isinstance(parsed, CommandError)
    assert COMMANDS["publish"].usage in parsed.message


def test_only_lines_of_their_own_are_commands() -> None:
    comment = "\n".join(
        [
            "Thanks! Running it now:",
            "/hbench status",
            "please /hbench delete x",  # not at the start of its line
            "> /hbench delete quoted",  # a quote of someone else's command
            "    /hbench delete indented-code",  # an indented code block
            "/hbenchmark publish x",  # another word
            "```",
            "/hbench delete in-a-fence",
            "```",
            "/hbench publish done-job",
        ]
    )
    assert parse_comment(comment) == [Status(), Publish(JobRef("done-job"))]


def test_a_comment_holds_at_most_ten_commands() -> None:
    parsed = parse_comment("\n".join(["/hbench status"] * (MAX_COMMANDS + 2)))
    assert parsed[:MAX_COMMANDS] == [Status()] * MAX_COMMANDS
    assert [p.code for p in parsed[MAX_COMMANDS:] if isinstance(p, CommandError)] == [
        "command-too-many"
    ] * 2


def test_a_job_named_by_id_reads_as_one() -> None:
    assert JobRef(JOB_ID).id == uuid.UUID(JOB_ID)
    assert JobRef("my-job").id is None


def test_the_parser_codes_are_rule_codes() -> None:
    assert CODES <= CODE_NAMES


@given(st.text(max_size=500))
def test_no_comment_makes_the_parser_crash(text: str) -> None:
    for parsed in parse_comment(text):
        assert isinstance(parsed, Publish | Withdraw | Delete | Status | Help | CommandError)
        if isinstance(parsed, CommandError):
            assert parsed.code in CODES


command_words = st.sampled_from([*COMMANDS, "publsh", "", "--board", "-x"])
argument = st.one_of(
    st.from_regex(r"[A-Za-z0-9._-]{1,70}", fullmatch=True),
    st.text(max_size=30),
    st.just("--board"),
    st.just("'"),
)


@given(command_words, st.lists(argument, max_size=4))
def test_any_command_line_parses_or_is_refused_with_its_code(word: str, args: list[str]) -> None:
    parsed = parse_line(" ".join(["/hbench", word, *args]))
    if isinstance(parsed, CommandError):
        assert parsed.code in CODES
        assert parsed.message
    else:
        assert parsed.name in COMMANDS
        job = getattr(parsed, "job", None)
        if job is not None:
            assert len(job.text) <= 64 or job.id is not None

"""The Actions protocol: inputs in, workflow commands out, environment files in heredoc form."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from hbench.action.protocol import Actions, Inputs, heredoc
from hbench.errors import HbenchError
from tests.action.runner import read_file_command


def actions_in(tmp_path: Path) -> tuple[Actions, io.StringIO]:
    files = {name: tmp_path / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_ENV")}
    for path in files.values():
        path.write_text("")
    out = io.StringIO()
    environ = {name: str(path) for name, path in files.items()}
    return Actions(environ, out=out), out


def test_inputs_arrive_with_hyphens_or_underscores_and_blank_means_unset() -> None:
    inputs = Inputs(
        {"INPUT_SERVICE-URL": "https://a.example", "INPUT_TASK_SET": "  lite ", "INPUT_BOARD": " "}
    )

    assert inputs.get("service-url") == "https://a.example"
    assert inputs.get("task-set") == "lite"
    assert inputs.get("board") is None
    assert inputs.get("board", "default") == "default"


@pytest.mark.parametrize(
    ("environ", "read", "needle"),
    [
        ({}, lambda i: i.required("agent"), "the input `agent` is required"),
        ({"INPUT_ATTEMPTS": "three"}, lambda i: i.integer("attempts"), "whole number, not 'three'"),
        ({"INPUT_UPLOAD": "maybe"}, lambda i: i.boolean("upload", default=True), "true or false"),
    ],
)
def test_bad_inputs_are_refused_with_a_rule_code(
    environ: dict[str, str], read: Callable[[Inputs], object], needle: str
) -> None:
    with pytest.raises(HbenchError) as raised:
        read(Inputs(environ))

    assert raised.value.code == "action-input-invalid"
    assert needle in raised.value.detail


def test_booleans_read_like_the_runner_writes_them() -> None:
    assert Inputs({"INPUT_UPLOAD": "false"}).boolean("upload", default=True) is False
    assert Inputs({"INPUT_UPLOAD": "True"}).boolean("upload", default=False) is True
    assert Inputs({}).boolean("upload", default=True) is True


def test_outputs_use_a_delimiter_the_value_cannot_hold(tmp_path: Path) -> None:
    actions, _ = actions_in(tmp_path)
    tricky = "line one\nname=not-an-output\nghadelimiter_x\n"

    actions.set_output("text", tricky)
    actions.set_output("plain", "1")
    actions.set_env("HBENCH_X", "y")

    assert read_file_command(tmp_path / "github_output") == {
        "text": tricky,
        "plain": "1",
    }
    assert read_file_command(tmp_path / "github_env") == {"HBENCH_X": "y"}
    assert heredoc("a", "b").startswith("a<<ghadelimiter_")


def test_masks_come_line_by_line_and_errors_are_escaped(tmp_path: Path) -> None:
    actions, out = actions_in(tmp_path)

    actions.mask("first\nsecond\n")
    code = actions.die("hbench: title, with: colon", "action-input-invalid", "100% wrong\nhere")

    assert code == 1
    assert out.getvalue().splitlines() == [
        "::add-mask::first",
        "::add-mask::second",
        "::error title=hbench%3A title%2C with%3A colon::100%25 wrong%0Ahere "
        "(action-input-invalid) — see docs/rule-codes.md#action-input-invalid",
    ]


def test_a_step_outside_a_runner_says_so(tmp_path: Path) -> None:
    actions = Actions({}, out=io.StringIO())

    with pytest.raises(HbenchError) as raised:
        actions.set_output("x", "y")

    assert raised.value.code == "action-environment-missing"
    assert "GITHUB_OUTPUT is not set" in raised.value.detail

"""One dataset row as a Harbor task folder, by the record's row mapping: pure, files out.

A task is `task.toml` (the skill document's default timeouts: agent 600 s, verifier 300 s,
build 600 s), `instruction.md`, `environment/Dockerfile`, `tests/expected.json`,
`tests/test.sh` (the grader of `registry.pull.grader`) and, when the licence allows the
rows to be redistributed, `solution/solve.sh`, which writes the expected answer for the
oracle.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench.errors import HbenchError
from registry.schema import Benchmark, RowMapping

AGENT_TIMEOUT_SEC = 600.0
VERIFIER_TIMEOUT_SEC = 300.0
BUILD_TIMEOUT_SEC = 600.0
CODE_TIMEOUT_SEC = 60.0
"""How long a row's own tests may run inside the verifier."""

ANSWER_FILE = "/app/answer.txt"
SOLUTION_FILE = "/app/solution.py"
BASE_IMAGE = "python:3.12-slim"
"""The tasks' image: the grader needs Python, and nothing else."""

GRADER = (Path(__file__).parent / "grader.py").read_text(encoding="utf-8")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

CLOSING = {
    "code_tests": f"Write your complete solution (the function and any imports it needs) to "
    f"`{SOLUTION_FILE}`. It is graded by running tests against that file.",
    "multiple_choice": f"Write only the letter of your choice to `{ANSWER_FILE}`.",
    "numeric": f"Write only the final number to `{ANSWER_FILE}`.",
    "exact_match": f"Write only your final answer to `{ANSWER_FILE}`.",
}


@dataclass(frozen=True)
class Task:
    """A task folder's name and files (relative path to text)."""

    name: str
    row: int
    row_id: str | None
    files: dict[str, str]


def task_name(slug: str, index: int) -> str:
    """A row's task: the benchmark's slug and the row's place in its split."""
    return f"{slug}-{index:04d}"


def make_task(benchmark: Benchmark, index: int, row: dict[str, Any], *, solution: bool) -> Task:
    """The task of the split's row `index`; `pull-row-invalid` when the row doesn't fit."""
    adapter = benchmark.harbor.adapter
    if adapter is None or adapter.rows is None:
        raise HbenchError("pull-not-pullable", f"{benchmark.slug} has no row mapping")
    mapping = adapter.rows
    name = task_name(benchmark.slug, index)
    try:
        expected = _expected(mapping, row)
        instruction = _instruction(mapping, row)
    except _RowError as error:
        raise HbenchError(
            "pull-row-invalid", f"{benchmark.slug}: row {index}: {error}", path=name
        ) from None
    row_id = str(row[mapping.id]) if mapping.id is not None and mapping.id in row else None
    files = {
        "task.toml": _task_toml(benchmark, index, row_id),
        "instruction.md": instruction,
        "environment/Dockerfile": f"FROM {BASE_IMAGE}\nWORKDIR /app\n",
        # One line: json's indenting encoder costs more than writing the file.
        "tests/expected.json": json.dumps(expected, sort_keys=True) + "\n",
        "tests/test.sh": _test_sh(),
    }
    if solution:
        files["solution/solve.sh"] = _solve_sh(expected)
    return Task(name=name, row=index, row_id=row_id, files=files)


class _RowError(Exception):
    """A row that doesn't fit its mapping; the message says which field."""


def _field(row: dict[str, Any], name: str) -> Any:
    if name not in row:
        raise _RowError(f"has no field {name!r} (it has {', '.join(sorted(row)) or 'none'})")
    value = row[name]
    if value is None:
        raise _RowError(f"field {name!r} is empty")
    return value


def _text(row: dict[str, Any], name: str) -> str:
    value = _field(row, name)
    return value if isinstance(value, str) else json.dumps(value)


def _choices(mapping: RowMapping, row: dict[str, Any]) -> list[str]:
    return _options(mapping, row)[0]


def _options(mapping: RowMapping, row: dict[str, Any]) -> tuple[list[str], list[str] | None]:
    """The options' texts, and their labels when the field is a `{text, label}` struct (the
    Hub's shape for ARC, whose answer is a label such as `B` or `3`)."""
    assert mapping.choices is not None  # noqa: S101 - the schema requires it for this grading
    value = _field(row, mapping.choices)
    labels = None
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        value, labels = value["text"], value.get("label")
        if not isinstance(labels, list) or len(labels) != len(value):
            raise _RowError(f"field {mapping.choices!r} has no label for each option")
    if not isinstance(value, list) or not value or len(value) > len(LETTERS):
        raise _RowError(f"field {mapping.choices!r} is not a list of 1 to 26 options")
    return [str(option) for option in value], None if labels is None else [str(x) for x in labels]


def _expected(mapping: RowMapping, row: dict[str, Any]) -> dict[str, Any]:
    if mapping.grading == "code_tests":
        assert mapping.tests is not None and mapping.entry_point is not None  # noqa: S101
        return {
            "grading": "code_tests",
            "answer": "".join(_text(row, name) for name in mapping.answer),
            "answerFile": SOLUTION_FILE,
            "tests": _text(row, mapping.tests),
            "entryPoint": _text(row, mapping.entry_point),
            "timeoutSec": CODE_TIMEOUT_SEC,
        }
    answer = _answer(mapping, row)
    expected: dict[str, Any] = {
        "grading": mapping.grading,
        "answer": answer,
        "answerFile": ANSWER_FILE,
    }
    if mapping.grading == "multiple_choice":
        expected["answer"] = _letter(answer, *_options(mapping, row))
    if mapping.grading == "numeric" and _number(expected["answer"]) is None:
        raise _RowError(f"answer {answer!r} holds no number")
    return expected


def _answer(mapping: RowMapping, row: dict[str, Any]) -> str:
    value = _field(row, mapping.answer[0])
    text = value if isinstance(value, str) else str(value)
    if mapping.answer_pattern is None:
        return text.strip()
    found = re.search(mapping.answer_pattern, text, flags=re.MULTILINE)
    if found is None or not found.groups():
        raise _RowError(f"answer {text[-80:]!r} doesn't match {mapping.answer_pattern!r}")
    return found.group(1).strip()


def _letter(answer: str, choices: list[str], labels: list[str] | None = None) -> str:
    """The expected option's letter, from the option's label, a letter, a 0-based index, or
    the option's text."""
    if labels is not None and answer in labels:
        return LETTERS[labels.index(answer)]
    if len(answer) == 1 and answer.upper() in LETTERS[: len(choices)]:
        return answer.upper()
    if answer.isdigit() and int(answer) < len(choices):
        return LETTERS[int(answer)]
    if answer in choices:
        return LETTERS[choices.index(answer)]
    raise _RowError(f"answer {answer!r} is none of the {len(choices)} options")


def _number(text: str) -> float | None:
    found = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", "").replace("$", ""))
    return float(found.group(0)) if found else None


def _instruction(mapping: RowMapping, row: dict[str, Any]) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name != "choices" or mapping.choices is None:
            return _text(row, name)
        options = _choices(mapping, row)
        return "\n".join(f"{LETTERS[i]}. {option}" for i, option in enumerate(options))

    body = PLACEHOLDER.sub(fill, mapping.instruction).rstrip()
    return f"{body}\n\n{CLOSING[mapping.grading]}\n"


def _task_toml(benchmark: Benchmark, index: int, row_id: str | None) -> str:
    lines = [
        'schema_version = "1.4"',
        "# What the agent leaves in /app is kept with the trial, so the verifier, which runs",
        "# in an environment of its own, grades it, and the job can be graded again.",
        'artifacts = ["/app"]',
        "",
        "[metadata]",
        f"benchmark = {json.dumps(benchmark.slug)}",
        f"row = {index}",
    ]
    if row_id is not None:
        lines.append(f"row_id = {json.dumps(row_id)}")
    lines += [
        "",
        "[verifier]",
        f"timeout_sec = {VERIFIER_TIMEOUT_SEC}",
        'environment_mode = "separate"',
        "",
        "[agent]",
        f"timeout_sec = {AGENT_TIMEOUT_SEC}",
        "",
        "[environment]",
        f"build_timeout_sec = {BUILD_TIMEOUT_SEC}",
        'os = "linux"',
        'workdir = "/app"',
    ]
    return "\n".join(lines) + "\n"


def _test_sh() -> str:
    return (
        "#!/bin/bash\n"
        "# Grades the task: writes 1 or 0 to /logs/verifier/reward.txt (hbench's row grader).\n"
        "set -u\n"
        "mkdir -p /logs/verifier\n"
        "python3 - <<'HBENCH_GRADER'\n"
        f"{GRADER}"
        "HBENCH_GRADER\n"
    )


def _solve_sh(expected: dict[str, Any]) -> str:
    """The oracle: writes the expected answer where the grader reads the agent's."""
    answer = str(expected["answer"])
    end = "HBENCH_" + hashlib.sha256(answer.encode()).hexdigest()[:12].upper()
    newline = "" if answer.endswith("\n") else "\n"
    return (
        "#!/bin/bash\n"
        "# The oracle: writes the row's expected answer.\n"
        "set -eu\n"
        f"mkdir -p {Path(expected['answerFile']).parent}\n"
        f"cat > {expected['answerFile']} <<'{end}'\n"
        f"{answer}{newline}"
        f"{end}\n"
    )

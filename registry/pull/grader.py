"""The verifier of a task made from a dataset row: this file's text runs inside the task's
`tests/test.sh`, with only Python's standard library, and writes the reward (1 or 0) to
`/logs/verifier/reward.txt`.

It reads `tests/expected.json` (written by `registry.pull.tasks`) and grades the agent's
answer file by the row's grading: `exact_match` (case and spacing ignored), `numeric` (the
first number, commas and currency signs ignored), `multiple_choice` (the option's letter)
or `code_tests` (the row's tests run against the agent's code, in a process of their own).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
LETTER = re.compile(r"\b([A-Z])\b")
ANSWERED = re.compile(r"answer\s*(?:is)?\s*:?\s*\(?([A-Za-z])\b", re.IGNORECASE)
BRACKETED = re.compile(r"\(([A-Z])\)")


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def number(text: str) -> float | None:
    found = NUMBER.search(text.replace(",", "").replace("$", ""))
    return float(found.group(0)) if found else None


def letter(text: str) -> str | None:
    """The option an answer picks: the whole answer when it is one letter (`C`, `(c)`,
    `C.`), else the letter after "answer", else one in parentheses, else the first capital
    letter standing alone that is not the word "I"."""
    alone = re.fullmatch(r"\(?([A-Za-z])[).]?", text.strip())
    if alone:
        return alone.group(1).upper()
    for pattern in (ANSWERED, BRACKETED):
        found = pattern.search(text)
        if found:
            return found.group(1).upper()
    return next((m.group(1) for m in LETTER.finditer(text) if m.group(1) != "I"), None)


def run_tests(solution: str, expected: dict[str, Any]) -> bool:
    """Whether the row's tests pass against the solution, run as one program."""
    program = f"{solution}\n\n{expected['tests']}\n\ncheck({expected['entryPoint']})\n"
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "check_solution.py"
        script.write_text(program, encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, str(script)],
                cwd=scratch,
                capture_output=True,
                timeout=float(expected.get("timeoutSec", 60)),
                check=False,
            )
        except subprocess.TimeoutExpired:
            print("the tests ran out of time")
            return False
    sys.stdout.write(done.stderr.decode("utf-8", "replace")[-2000:])
    return done.returncode == 0


def grade(expected: dict[str, Any], answer: str) -> bool:
    """Whether the answer is right for the row."""
    grading = expected["grading"]
    if grading == "code_tests":
        return run_tests(answer, expected)
    want = str(expected["answer"])
    if grading == "exact_match":
        return normalise(answer) == normalise(want)
    if grading == "numeric":
        got, target = number(answer), number(want)
        if got is None or target is None:
            return False
        return math.isclose(got, target, rel_tol=1e-6, abs_tol=1e-9)
    if grading == "multiple_choice":
        return letter(answer) == want.strip().upper()
    raise ValueError(f"unknown grading {grading!r}")


def main(tests_dir: str = "/tests", logs_dir: str = "/logs/verifier") -> int:
    expected = json.loads(Path(tests_dir, "expected.json").read_text(encoding="utf-8"))
    answer_file = Path(expected["answerFile"])
    try:
        answer = answer_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"no answer: {answer_file}: {error}")
        answer = None
    passed = answer is not None and grade(expected, answer)
    Path(logs_dir).mkdir(parents=True, exist_ok=True)
    Path(logs_dir, "reward.txt").write_text("1\n" if passed else "0\n", encoding="utf-8")
    print("passed" if passed else "failed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

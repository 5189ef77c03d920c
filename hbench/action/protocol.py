"""The GitHub Actions protocol, spoken explicitly: inputs in, commands on stdout, files out.

One input normaliser (`Inputs`), `::add-mask::` before anything else is printed, the
`GITHUB_OUTPUT`/`GITHUB_ENV`/`GITHUB_STEP_SUMMARY` files in their heredoc form, and `die()`
that ends a step with an `::error::` annotation carrying the rule code and the fix.
Workflow commands and environment files are described in GitHub's "Workflow commands for
GitHub Actions".
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from hbench.codes import docs_link
from hbench.errors import HbenchError, Problem

TRUE = {"true", "yes", "1", "on"}
FALSE = {"false", "no", "0", "off", ""}


def input_names(name: str) -> tuple[str, ...]:
    """The variables an input may arrive in: the runner's own form keeps hyphens
    (`INPUT_SERVICE-URL`), the `env:` form our YAML uses has underscores."""
    upper = name.upper().replace(" ", "_")
    return (f"INPUT_{upper.replace('-', '_')}", f"INPUT_{upper}")


@dataclass(frozen=True)
class Inputs:
    """A step's inputs, read from `INPUT_*` variables; empty strings count as unset,
    since an Action's input that was not given arrives as one."""

    environ: Mapping[str, str]

    def get(self, name: str, default: str | None = None) -> str | None:
        for variable in input_names(name):
            value = self.environ.get(variable, "").strip()
            if value:
                return value
        return default

    def required(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise HbenchError(
                "action-input-invalid", f"the input `{name}` is required; set it under `with:`"
            )
        return value

    def integer(self, name: str) -> int | None:
        value = self.get(name)
        if value is None:
            return None
        try:
            return int(value)
        except ValueError:
            message = f"the input `{name}` must be a whole number, not {value!r}"
            raise HbenchError("action-input-invalid", message) from None

    def boolean(self, name: str, *, default: bool) -> bool:
        value = (self.get(name) or "").lower()
        if not value:
            return default
        if value in TRUE:
            return True
        if value in FALSE:
            return False
        message = f"the input `{name}` must be true or false, not {value!r}"
        raise HbenchError("action-input-invalid", message)


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF are encoded, as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (`title=…`): also `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


PERMISSION_YAML = "permissions:\n  id-token: write\n  contents: read"

FIXES = {
    "action-oidc-unavailable": f"give the job these permissions:\n{PERMISSION_YAML}\n"
    "or pass the `api-token` input",
}
"""Fixes worth spelling out in the annotation itself; every other code points at its docs."""


def fix_for(code: str) -> str:
    """The fix for a rule code: spelled out when we can, else where it is written down."""
    return FIXES.get(code, f"see {docs_link(code)}")


@dataclass
class Actions:
    """The step's side of the runner: commands on `out`, and the environment files."""

    environ: Mapping[str, str]
    out: TextIO = field(default_factory=lambda: sys.stdout)
    masked: list[str] = field(default_factory=list)

    # Commands on stdout.

    def mask(self, value: str) -> None:
        """Hide `value` in every later line of the log; each line of it on its own."""
        for line in value.splitlines():
            if line.strip():
                self.masked.append(line)
                self.command("add-mask", line)

    def command(self, name: str, message: str, **properties: str) -> None:
        props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
        self.out.write(f"::{name}{' ' + props if props else ''}::{escape_data(message)}\n")
        self.out.flush()

    def log(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def error(self, title: str, message: str) -> None:
        self.command("error", message, title=title)

    def warning(self, title: str, message: str) -> None:
        self.command("warning", message, title=title)

    def notice(self, title: str, message: str) -> None:
        self.command("notice", message, title=title)

    def problems(self, title: str, problems: tuple[Problem, ...] | list[Problem]) -> None:
        """One annotation per problem: what failed (its code) — where the fix is."""
        for problem in problems:
            self.error(title, f"{problem.detail} — {fix_for(problem.code)}")

    def die(self, title: str, code: str, message: str, fix: str | None = None) -> int:
        """Fail the step with one annotation: `message (code) — fix`; the step's exit code."""
        problem = Problem(code, message)
        self.error(title, f"{problem.detail} — {fix or fix_for(code)}")
        return 1

    # Environment files.

    def _file(self, variable: str) -> Path:
        value = self.environ.get(variable)
        if not value:
            raise HbenchError(
                "action-environment-missing",
                f"{variable} is not set: run this step in a GitHub Actions job",
            )
        return Path(value)

    def _append(self, variable: str, text: str) -> None:
        with self._file(variable).open("a", encoding="utf-8") as stream:
            stream.write(text)

    def set_output(self, name: str, value: str) -> None:
        self._append("GITHUB_OUTPUT", heredoc(name, value))

    def set_env(self, name: str, value: str) -> None:
        self._append("GITHUB_ENV", heredoc(name, value))

    def summary(self, markdown: str) -> None:
        ending = "" if markdown.endswith("\n") else "\n"
        self._append("GITHUB_STEP_SUMMARY", markdown + ending)

    def temp_dir(self) -> Path:
        """The runner's scratch folder for this job (`RUNNER_TEMP`), emptied after it."""
        return self._file("RUNNER_TEMP")

    def workspace(self) -> Path:
        return self._file("GITHUB_WORKSPACE")


class StepError(HbenchError):
    """A step's failure with a fix of its own, said instead of the rule code's documented one."""

    def __init__(self, code: str, message: str, fix: str) -> None:
        super().__init__(code, message)
        self.fix = fix


def run_step(
    title: str,
    step: Callable[[Actions, Mapping[str, str]], object],
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run a step on the environment's inputs: 0 when it succeeds, 1 with one `::error::`
    annotation per problem (rule code and fix) when it is refused."""
    env = os.environ if environ is None else environ
    actions = Actions(env)
    try:
        step(actions, env)
    except StepError as error:
        return actions.die(title, error.code, error.problems[0].message, error.fix)
    except HbenchError as error:
        actions.problems(title, error.problems)
        return 1
    return 0


def heredoc(name: str, value: str) -> str:
    """`name<<DELIM`, the value, `DELIM`: safe for any value, with a delimiter it can't hold."""
    delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    while delimiter in value:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"

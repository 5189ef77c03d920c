"""The one error type of hbench: every refusal carries a stable rule code from `hbench.codes`."""

from __future__ import annotations

from dataclasses import dataclass

from hbench.codes import CODE_NAMES, docs_link


@dataclass(frozen=True)
class Problem:
    """One failed check: its rule code, a sentence for people, and the file it concerns, if any."""

    code: str
    message: str
    path: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CODE_NAMES:
            raise ValueError(f"unknown rule code {self.code!r}; add it to hbench/codes.py and docs")

    @property
    def detail(self) -> str:
        """The message as shown to people: it always ends with the rule code."""
        return f"{self.message} ({self.code})"


class HbenchError(Exception):
    """A refusal: one or more problems, each with its rule code.

    The first problem names the error; `problems` keeps every one, since checks
    report all their failures, not only the first.
    """

    def __init__(self, code: str, message: str, *, path: str | None = None) -> None:
        self.problems: tuple[Problem, ...] = (Problem(code, message, path),)
        super().__init__(self.problems[0].detail)

    @classmethod
    def from_problems(cls, problems: list[Problem] | tuple[Problem, ...]) -> HbenchError:
        if not problems:
            raise ValueError("an HbenchError needs at least one problem")
        error = cls(problems[0].code, problems[0].message, path=problems[0].path)
        error.problems = tuple(problems)
        return error

    @property
    def code(self) -> str:
        return self.problems[0].code

    @property
    def detail(self) -> str:
        return self.problems[0].detail

    @property
    def help_url(self) -> str:
        return docs_link(self.code)

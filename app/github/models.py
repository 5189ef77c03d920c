"""The values the App exchanges with GitHub, typed: what `GitHubPort` takes and answers.

GitHub sends far more than these fields; the client reads only what hbench uses, so a
field GitHub adds or drops elsewhere in a response can't break it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# GitHub's rules for owner and repository names (REST paths take them unquoted).
OWNER_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,100}$")

Permission = Literal["admin", "write", "read", "none"]
Reaction = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]
CheckConclusion = Literal["success", "failure", "neutral", "action_required"]

# The legacy base roles GitHub reports in `permission`; `maintain` reads as write and
# `triage` as read there, which is what hbench wants.
WRITE_PERMISSIONS: frozenset[str] = frozenset({"admin", "write"})


@dataclass(frozen=True)
class Repo:
    """A repository, by owner and name."""

    owner: str
    name: str

    def __post_init__(self) -> None:
        if not OWNER_PATTERN.fullmatch(self.owner) or not NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"not a GitHub repository: {self.owner}/{self.name}")
        if self.name in {".", ".."}:
            raise ValueError(f"not a GitHub repository: {self.owner}/{self.name}")

    @classmethod
    def parse(cls, full_name: str) -> Repo:
        """`owner/name` as a `Repo`; raises ValueError for anything else."""
        owner, slash, name = full_name.partition("/")
        if not slash:
            raise ValueError(f"not owner/name: {full_name}")
        return cls(owner, name)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        return self.full_name


@dataclass(frozen=True)
class GitHubUser:
    """A GitHub account: its numeric id is the identity, its login may change."""

    id: int
    login: str
    type: str = "User"


@dataclass(frozen=True)
class Comment:
    """An issue or pull-request comment; `app_id` is set when a GitHub App wrote it."""

    id: int
    body: str
    author: GitHubUser
    app_id: int | None = None


@dataclass(frozen=True)
class Installation:
    """Where the App is installed: its id and the account (user or organisation)."""

    id: int
    account: GitHubUser


@dataclass(frozen=True)
class CheckRun:
    """A completed check run to show on a commit."""

    name: str
    head_sha: str
    conclusion: CheckConclusion
    title: str
    summary: str
    text: str | None = None
    details_url: str | None = None


@dataclass(frozen=True)
class Tree:
    """The files of a commit: path to blob sha. `truncated` when GitHub left some out."""

    sha: str
    files: dict[str, str]
    truncated: bool = False

"""The few fields of GitHub's webhook payloads the behaviours read, as lenient models.

githubkit's own webhook models insist on every field of GitHub's schema and refuse a
third of GitHub's published examples (`../shared/reference/github.md`, 1.4), so a
payload is read here instead: unknown fields are ignored, the ones used are checked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.github.models import GitHubUser, Repo
from app.settings import REPOSITORY_PATTERN


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Account(Lenient):
    id: int
    login: str = Field(min_length=1, max_length=100)
    type: str = "User"

    def user(self) -> GitHubUser:
        return GitHubUser(id=self.id, login=self.login, type=self.type)


class AppRef(Lenient):
    id: int


class Repository(Lenient):
    id: int
    full_name: str = Field(pattern=REPOSITORY_PATTERN)

    @property
    def repo(self) -> Repo:
        return Repo.parse(self.full_name)


class InstallationRef(Lenient):
    id: int


class CommentPayload(Lenient):
    id: int
    body: str | None = None
    user: Account
    performed_via_github_app: AppRef | None = None


class IssuePayload(Lenient):
    number: int = Field(gt=0)
    pull_request: dict[str, Any] | None = None


class IssueCommentEvent(Lenient):
    """`issue_comment`: a comment on an issue or a pull request."""

    action: str
    comment: CommentPayload
    issue: IssuePayload
    repository: Repository
    installation: InstallationRef | None = None


class RepositoryBrief(Lenient):
    id: int
    full_name: str = Field(pattern=REPOSITORY_PATTERN)


class InstallationPayload(Lenient):
    id: int
    account: Account
    repository_selection: str = "all"


class InstallationEvent(Lenient):
    """`installation`: the App was installed, removed, suspended or given permissions."""

    action: str
    installation: InstallationPayload
    repositories: list[RepositoryBrief] = []
    sender: Account


class InstallationRepositoriesEvent(Lenient):
    """`installation_repositories`: repositories added to or removed from one."""

    action: str
    installation: InstallationPayload
    repository_selection: str | None = None
    repositories_added: list[RepositoryBrief] = []
    repositories_removed: list[RepositoryBrief] = []
    sender: Account


class CommitRef(Lenient):
    sha: str = Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")


class PullRequestPayload(Lenient):
    number: int = Field(gt=0)
    head: CommitRef


class PullRequestEvent(Lenient):
    """`pull_request`: a pull request opened, pushed to, reopened (and more)."""

    action: str
    number: int = Field(gt=0)
    pull_request: PullRequestPayload
    repository: Repository

"""`GitHubPort`, the narrow interface the service talks to GitHub through, and the FastAPI
dependency that hands out the app's client (`app.github.client`, over githubkit). Tests
override the dependency with a client into the fake GitHub (`tests/fakes/github/`).
"""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Depends, Request

from app.dependencies import SettingsDep
from app.github.client import GitHubKitClient
from app.github.models import (
    CheckRun,
    Comment,
    GitHubUser,
    Installation,
    Permission,
    Reaction,
    Repo,
    Tree,
)


class GitHubPort(Protocol):
    """What the service asks of GitHub. Each repository call runs as the App's
    installation on that repository; failures raise `HbenchError`s."""

    async def repo_installation(self, repo: Repo) -> Installation | None:
        """The App's installation on a repository, or None where it is not installed."""
        ...

    async def collaborator_permission(
        self, repo: Repo, login: str, user_id: int | None = None
    ) -> Permission:
        """A person's base permission on a repository (`none` for strangers). With
        `user_id`, `none` unless GitHub answers for that account: the login may have been
        renamed and taken by someone else since the caller read it."""
        ...

    async def create_comment(self, repo: Repo, issue_number: int, body: str) -> Comment:
        """Comment on an issue or pull request."""
        ...

    async def edit_comment(self, repo: Repo, comment_id: int, body: str) -> Comment:
        """Replace a comment's text."""
        ...

    async def find_marked_comment(
        self, repo: Repo, issue_number: int, marker: str
    ) -> Comment | None:
        """The oldest comment this App wrote in a thread whose text holds `marker`."""
        ...

    async def react(self, repo: Repo, comment_id: int, reaction: Reaction) -> None:
        """Add a reaction to a comment (again: no change)."""
        ...

    async def create_check_run(self, repo: Repo, check: CheckRun) -> int:
        """Show a completed check run on a commit; returns its id."""
        ...

    async def pull_request_files(self, repo: Repo, number: int) -> list[str]:
        """The paths a pull request changes (a renamed file's old path too)."""
        ...

    async def tree(self, repo: Repo, sha: str) -> Tree:
        """Every file of a commit, by path, with its blob's sha."""
        ...

    async def blob(self, repo: Repo, sha: str) -> bytes:
        """A file's content, by its blob's sha."""
        ...

    async def user_from_oauth_code(self, code: str, redirect_uri: str) -> GitHubUser:
        """Exchange an OAuth web-flow code and return the user who granted it."""
        ...


def get_github(request: Request, settings: SettingsDep) -> GitHubPort:
    """The app's GitHub client, made on first use and kept: it holds the token caches.
    A FastAPI dependency: tests override it with a client into the fake GitHub."""
    client = getattr(request.app.state, "github", None)
    if not isinstance(client, GitHubKitClient):
        client = GitHubKitClient.from_settings(settings)
        request.app.state.github = client
    return client


GitHubDep = Annotated[GitHubPort, Depends(get_github)]

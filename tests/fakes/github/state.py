"""The fake GitHub's memory: its App, users, repositories (with commits and pull
requests), installations, comments, reactions, check runs, the tokens it handed out, and
every request it answered.

Tests arrange the world here (`add_user`, `add_repo`, `install`, `grant`), then read back
what the service did (`comments_on`, `reactions_on`, `check_runs`).
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from tests.fakes.github.oidc import FakeOidcIssuer

# What GitHub reports in `permission` for each role (`role_name`).
BASE_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}


def pem(key: RSAPrivateKey) -> str:
    """A private key as the `.pem` file GitHub hands an App's owner."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@dataclass
class FakeUser:
    id: int
    login: str
    type: str = "User"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "login": self.login, "type": self.type, "node_id": f"U_{self.id}"}


@dataclass
class FakeApp:
    """The GitHub App the service runs as: its keys and secrets."""

    id: int
    slug: str
    private_key: RSAPrivateKey
    client_id: str
    client_secret: str
    webhook_secret: str

    @property
    def private_key_pem(self) -> str:
        return pem(self.private_key)

    @property
    def bot(self) -> FakeUser:
        # Bots' ids are their own; any number apart from people's will do here.
        return FakeUser(id=900_000 + self.id, login=f"{self.slug}[bot]", type="Bot")


@dataclass
class FakePull:
    """A pull request: its head commit and the paths it changes."""

    number: int
    head_sha: str
    changed: list[str]
    author: FakeUser


@dataclass
class FakeRepo:
    id: int
    owner: FakeUser
    name: str
    private: bool = False
    roles: dict[int, str] = field(default_factory=dict)  # user id -> role name
    commits: dict[str, dict[str, str]] = field(default_factory=dict)  # sha -> path -> blob sha
    pulls: dict[int, FakePull] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "full_name": self.full_name,
            "private": self.private,
            "owner": self.owner.to_json(),
        }


@dataclass
class FakeInstallation:
    id: int
    account: FakeUser
    repository_ids: set[int] | None  # None: every repository of the account

    def covers(self, repo: FakeRepo) -> bool:
        if repo.owner.id != self.account.id:
            return False
        return self.repository_ids is None or repo.id in self.repository_ids


@dataclass
class FakeComment:
    id: int
    repo: FakeRepo
    issue_number: int
    body: str
    user: FakeUser
    app_id: int | None
    created_at: datetime
    updated_at: datetime
    edits: int = 0
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (content, login)


@dataclass
class FakeCheckRun:
    id: int
    repo: FakeRepo
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    output: dict[str, Any]


@dataclass
class InstallationToken:
    installation_id: int
    expires_at: datetime
    repository_names: tuple[str, ...] | None
    permissions: dict[str, str]


@dataclass
class OAuthGrant:
    user: FakeUser
    client_id: str
    redirect_uri: str | None
    used: bool = False


@dataclass
class Seen:
    """One request the fake answered: enough to check who authenticated how."""

    method: str
    path: str
    auth: str  # "jwt", "installation", "user", "basic" or "none"
    status: int


class FakeGitHub:
    """Everything the fake GitHub knows. `url` is where it is served (the OIDC issuer)."""

    def __init__(
        self,
        app_key: RSAPrivateKey,
        oidc_keys: list[RSAPrivateKey],
        *,
        url: str = "http://127.0.0.1:9",
        app_id: int = 4242,
    ) -> None:
        self.url = url
        self.app = FakeApp(
            id=app_id,
            slug="hbench",
            private_key=app_key,
            client_id="Iv1.fakeclient00001",
            client_secret=secrets.token_urlsafe(24),
            webhook_secret=secrets.token_urlsafe(24),
        )
        # Who made the App: payloads that name the App name its owner.
        self.app_owner = FakeUser(800_000 + app_id, "hbench-app-owner", type="Organization")
        self.oidc = FakeOidcIssuer(self, oidc_keys)
        self.users: dict[int, FakeUser] = {}
        self.repos: dict[str, FakeRepo] = {}
        self.installations: dict[int, FakeInstallation] = {}
        self.comments: dict[int, FakeComment] = {}
        self.check_runs: list[FakeCheckRun] = []
        self.tokens: dict[str, InstallationToken] = {}
        self.user_tokens: dict[str, FakeUser] = {}
        self.grants: dict[str, OAuthGrant] = {}
        self.seen: list[Seen] = []
        self.blobs: dict[str, bytes] = {}  # git blob sha -> content
        # The manifest flow: each code GitHub sent a browser back with, to the manifest it
        # made an App of (one code, one conversion).
        self.manifests: dict[str, dict[str, object]] = {}
        # Installation tokens to hand out next, in order, before random ones: a test that
        # serves git over HTTP must know the token its server will take.
        self.next_installation_tokens: list[str] = []
        self.signing_in: FakeUser | None = None  # who approves the next OAuth authorize
        self.deny_sign_in = False
        self._ids = itertools.count(1001)

    def next_id(self) -> int:
        return next(self._ids)

    # -- arranging the world -------------------------------------------------------------

    def add_user(self, login: str, *, id: int | None = None, type: str = "User") -> FakeUser:
        user = FakeUser(id=id if id is not None else self.next_id(), login=login, type=type)
        self.users[user.id] = user
        return user

    def user(self, login: str) -> FakeUser | None:
        return next((u for u in self.users.values() if u.login.lower() == login.lower()), None)

    def add_repo(
        self, owner: FakeUser, name: str, *, private: bool = False, id: int | None = None
    ) -> FakeRepo:
        repo_id = id if id is not None else self.next_id()
        repo = FakeRepo(id=repo_id, owner=owner, name=name, private=private)
        repo.roles[owner.id] = "admin"
        self.repos[repo.full_name.lower()] = repo
        return repo

    def repo(self, owner: str, name: str) -> FakeRepo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def install(
        self, account: FakeUser, repos: list[FakeRepo] | None = None, *, id: int | None = None
    ) -> FakeInstallation:
        installation = FakeInstallation(
            id=id if id is not None else self.next_id(),
            account=account,
            repository_ids=None if repos is None else {repo.id for repo in repos},
        )
        self.installations[installation.id] = installation
        return installation

    def grant(self, repo: FakeRepo, user: FakeUser, role: str) -> None:
        if role not in BASE_PERMISSION:
            raise ValueError(f"no such role: {role}")
        repo.roles[user.id] = role

    def post_comment(
        self, repo: FakeRepo, issue_number: int, user: FakeUser, body: str, *, id: int | None = None
    ) -> FakeComment:
        """A comment someone wrote (the service is then told by a webhook delivery)."""
        return self._add_comment(repo, issue_number, user, body, app_id=None, id=id)

    def _add_comment(
        self,
        repo: FakeRepo,
        issue_number: int,
        user: FakeUser,
        body: str,
        *,
        app_id: int | None,
        id: int | None = None,
    ) -> FakeComment:
        now = datetime.now(UTC)
        comment = FakeComment(
            id=id if id is not None else self.next_id(),
            repo=repo,
            issue_number=issue_number,
            body=body,
            user=user,
            app_id=app_id,
            created_at=now,
            updated_at=now,
        )
        self.comments[comment.id] = comment
        return comment

    def commit(
        self, repo: FakeRepo, files: dict[str, str | bytes], *, commit_sha: str | None = None
    ) -> str:
        """A commit holding exactly `files` (path to content); returns its sha
        (`commit_sha`, for a commit a delivery names already). Blob shas are git's, so
        equal contents share one blob."""
        tree: dict[str, str] = {}
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            sha = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
            self.blobs[sha] = data
            tree[path] = sha
        listing = "\n".join(f"{path} {sha}" for path, sha in sorted(tree.items()))
        commit_sha = (
            commit_sha
            or hashlib.sha1(
                f"{repo.full_name}\n{listing}\n{self.next_id()}".encode(), usedforsecurity=False
            ).hexdigest()
        )
        repo.commits[commit_sha] = tree
        return commit_sha

    def open_pull(
        self,
        repo: FakeRepo,
        author: FakeUser,
        head_sha: str,
        changed: list[str],
        *,
        number: int | None = None,
    ) -> FakePull:
        """A pull request to `repo` whose head is `head_sha`, changing `changed`."""
        pull = FakePull(
            number=number if number is not None else self.next_id(),
            head_sha=head_sha,
            changed=changed,
            author=author,
        )
        repo.pulls[pull.number] = pull
        return pull

    # -- reading back what the service did ------------------------------------------------

    def comments_on(self, repo: FakeRepo, issue_number: int) -> list[FakeComment]:
        return sorted(
            (
                c
                for c in self.comments.values()
                if c.repo is repo and c.issue_number == issue_number
            ),
            key=lambda c: c.id,
        )

    def replies_on(self, repo: FakeRepo, issue_number: int) -> list[FakeComment]:
        """The comments the App wrote in a thread."""
        return [c for c in self.comments_on(repo, issue_number) if c.app_id == self.app.id]

    def reactions_on(self, comment: FakeComment) -> list[str]:
        return [content for content, _ in comment.reactions]

    # -- what the App's tokens may do -------------------------------------------------------

    def mint_installation_token(
        self,
        installation: FakeInstallation,
        repository_names: tuple[str, ...] | None,
        permissions: dict[str, str],
    ) -> tuple[str, InstallationToken]:
        if self.next_installation_tokens:
            token = self.next_installation_tokens.pop(0)
        else:
            token = "ghs_" + secrets.token_urlsafe(27)
        grant = InstallationToken(
            installation_id=installation.id,
            expires_at=datetime.now(UTC) + timedelta(hours=1),
            repository_names=repository_names,
            permissions=permissions,
        )
        self.tokens[token] = grant
        return token, grant

    def reply_as_app(self, repo: FakeRepo, issue_number: int, body: str) -> FakeComment:
        return self._add_comment(repo, issue_number, self.app.bot, body, app_id=self.app.id)

"""`GitHubKitClient`, the githubkit client behind `GitHubPort` (`app.github.port`).

The client authenticates as the App (a JWT signed with its private key), asks which
installation covers a repository, and calls the REST API with that installation's token
(githubkit mints and caches it). It reads responses as plain JSON into `app.github.models`
rather than githubkit's full schema models, which refuse a response missing any field.
Tests hand the client an `httpx` transport into the fake GitHub (`tests/fakes/github/`),
so every call goes through githubkit's real HTTP path.
"""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING, Any, cast

import httpx
from githubkit import AppAuthStrategy, GitHub, OAuthAppAuthStrategy, OAuthWebAuthStrategy
from githubkit.auth import AppInstallationAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import AuthExpiredError, RequestError, RequestFailed
from githubkit.utils import UNSET

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
from app.github.responses import (
    asking,
    comment_from,
    json_of,
    request_failed,
    unreachable,
    user_from,
)
from app.settings import Settings
from hbench.errors import HbenchError

if TYPE_CHECKING:
    # The schema package is large; its types are for the checker only.
    from githubkit_schemas.latest.types import ReposOwnerRepoCheckRunsPostBodyPropOutputType

PAGE_SIZE = 100
# A thread with more comments than this is searched no further for our reply; a new one
# is posted instead, which is harmless.
MAX_COMMENT_PAGES = 30
MAX_PULL_FILE_PAGES = 30
# Which installation covers a repository changes only when the App is reinstalled.
INSTALLATION_TTL_SECONDS = 300.0
TIMEOUT_SECONDS = 10.0
PERMISSIONS: frozenset[str] = frozenset({"admin", "write", "read", "none"})


class GitHubKitClient:
    """`GitHubPort` over githubkit, as the App (installation tokens) and its OAuth client."""

    def __init__(
        self,
        *,
        base_url: str,
        app_id: int | None = None,
        private_key: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        auto_retry: bool = True,
    ) -> None:
        self.base_url = base_url
        self.app_id = app_id
        self._client_id = client_id
        self._client_secret = client_secret
        self._transport = transport
        self._auto_retry = auto_retry
        # One token cache per client: githubkit's default is process-wide, keyed by App id,
        # so two clients for one App (a test's, after another's) would share tokens.
        self._cache = MemCacheStrategy()
        self._app: GitHub[AppAuthStrategy] | None = None
        if app_id is not None and private_key is not None:
            self._app = self._github(AppAuthStrategy(app_id, private_key, client_id, client_secret))
        self._installations: dict[Repo, tuple[float, int]] = {}
        self._clients: dict[int, GitHub[AppInstallationAuthStrategy]] = {}

    @classmethod
    def from_settings(
        cls, settings: Settings, transport: httpx.AsyncBaseTransport | None = None
    ) -> GitHubKitClient:
        def secret(value: Any) -> str | None:
            return None if value is None else str(value.get_secret_value())

        return cls(
            base_url=settings.github_api_url,
            app_id=settings.github_app_id,
            private_key=secret(settings.github_private_key),
            client_id=settings.github_client_id,
            client_secret=secret(settings.github_client_secret),
            transport=transport,
        )

    def _github[A: (AppAuthStrategy, OAuthAppAuthStrategy)](self, auth: A) -> GitHub[A]:
        return GitHub(
            auth,
            base_url=self.base_url,
            async_transport=self._transport,
            http_cache=False,
            auto_retry=self._auto_retry,
            cache_strategy=self._cache,
            timeout=TIMEOUT_SECONDS,
            user_agent="hbench",
        )

    def _app_client(self) -> GitHub[AppAuthStrategy]:
        if self._app is None:
            raise HbenchError(
                "github-not-configured",
                "the GitHub App is not configured: set HBENCH_GITHUB_APP_ID and "
                "HBENCH_GITHUB_PRIVATE_KEY",
            )
        return self._app

    async def repo_installation(self, repo: Repo) -> Installation | None:
        app = self._app_client()
        try:
            response = await app.rest.apps.async_get_repo_installation(repo.owner, repo.name)
        except RequestFailed as failed:
            if failed.response.status_code == 404:
                return None
            raise request_failed(failed, f"the App's installation on {repo}") from None
        except RequestError as error:
            raise unreachable(error, f"the App's installation on {repo}") from None
        data = json_of(response)
        return Installation(id=int(data["id"]), account=user_from(data["account"]))

    async def _installation(self, repo: Repo) -> GitHub[AppInstallationAuthStrategy]:
        cached = self._installations.get(repo)
        if cached is not None and time.monotonic() - cached[0] < INSTALLATION_TTL_SECONDS:
            installation_id = cached[1]
        else:
            installation = await self.repo_installation(repo)
            if installation is None:
                self._installations.pop(repo, None)
                raise HbenchError(
                    "github-not-installed",
                    f"the hbench App is not installed on {repo}; install it there first",
                )
            installation_id = installation.id
            self._installations[repo] = (time.monotonic(), installation_id)
        client = self._clients.get(installation_id)
        if client is None:
            app = self._app_client()
            client = app.with_auth(app.auth.as_installation(installation_id))
            self._clients[installation_id] = client
        return client

    async def collaborator_permission(
        self, repo: Repo, login: str, user_id: int | None = None
    ) -> Permission:
        gh = await self._installation(repo)
        what = f"{login}'s permission on {repo}"
        try:
            response = await gh.rest.repos.async_get_collaborator_permission_level(
                repo.owner, repo.name, login
            )
        except RequestFailed as failed:
            # GitHub answers 404 for a login that does not exist: no permission at all.
            if failed.response.status_code == 404:
                return "none"
            raise request_failed(failed, what) from None
        except RequestError as error:
            raise unreachable(error, what) from None
        answer = json_of(response)
        holder = answer.get("user")
        if user_id is not None and (not isinstance(holder, dict) or holder.get("id") != user_id):
            return "none"
        permission = answer.get("permission")
        return cast(Permission, permission) if permission in PERMISSIONS else "none"

    async def create_comment(self, repo: Repo, issue_number: int, body: str) -> Comment:
        gh = await self._installation(repo)
        what = f"a comment on {repo}#{issue_number}"
        with asking(what):
            response = await gh.rest.issues.async_create_comment(
                repo.owner, repo.name, issue_number, body=body
            )
        return comment_from(json_of(response))

    async def edit_comment(self, repo: Repo, comment_id: int, body: str) -> Comment:
        gh = await self._installation(repo)
        what = f"comment {comment_id} on {repo}"
        with asking(what):
            response = await gh.rest.issues.async_update_comment(
                repo.owner, repo.name, comment_id, body=body
            )
        return comment_from(json_of(response))

    async def find_marked_comment(
        self, repo: Repo, issue_number: int, marker: str
    ) -> Comment | None:
        gh = await self._installation(repo)
        what = f"the comments on {repo}#{issue_number}"
        for page in range(1, MAX_COMMENT_PAGES + 1):
            with asking(what):
                response = await gh.rest.issues.async_list_comments(
                    repo.owner, repo.name, issue_number, per_page=PAGE_SIZE, page=page
                )
            items: list[dict[str, Any]] = response.raw_response.json()
            for item in items:
                comment = comment_from(item)
                # Only our own: anyone can paste the marker into a comment of theirs.
                if comment.app_id == self.app_id and marker in comment.body:
                    return comment
            if len(items) < PAGE_SIZE:
                break
        return None

    async def react(self, repo: Repo, comment_id: int, reaction: Reaction) -> None:
        gh = await self._installation(repo)
        what = f"a reaction to comment {comment_id} on {repo}"
        with asking(what):
            await gh.rest.reactions.async_create_for_issue_comment(
                repo.owner, repo.name, comment_id, content=reaction
            )

    async def create_check_run(self, repo: Repo, check: CheckRun) -> int:
        gh = await self._installation(repo)
        output: ReposOwnerRepoCheckRunsPostBodyPropOutputType = {
            "title": check.title,
            "summary": check.summary,
        }
        if check.text is not None:
            output["text"] = check.text
        what = f"the check run {check.name!r} on {repo}@{check.head_sha[:12]}"
        with asking(what):
            response = await gh.rest.checks.async_create(
                repo.owner,
                repo.name,
                name=check.name,
                head_sha=check.head_sha,
                status="completed",
                conclusion=check.conclusion,
                output=output,
                details_url=check.details_url or UNSET,
            )
        return int(json_of(response)["id"])

    async def pull_request_files(self, repo: Repo, number: int) -> list[str]:
        gh = await self._installation(repo)
        paths: list[str] = []
        # GitHub lists at most 3000 files of a pull request, 100 a page.
        for page in range(1, MAX_PULL_FILE_PAGES + 1):
            with asking(f"the files of {repo}#{number}"):
                response = await gh.rest.pulls.async_list_files(
                    repo.owner, repo.name, number, per_page=PAGE_SIZE, page=page
                )
            items: list[dict[str, Any]] = response.raw_response.json()
            for item in items:
                paths.append(str(item["filename"]))
                if item.get("previous_filename"):
                    paths.append(str(item["previous_filename"]))
            if len(items) < PAGE_SIZE:
                break
        return paths

    async def tree(self, repo: Repo, sha: str) -> Tree:
        gh = await self._installation(repo)
        with asking(f"the files of {repo}@{sha[:12]}"):
            response = await gh.rest.git.async_get_tree(repo.owner, repo.name, sha, recursive="1")
        data = json_of(response)
        files = {
            str(item["path"]): str(item["sha"])
            for item in data.get("tree", [])
            if item.get("type") == "blob"
        }
        return Tree(
            sha=str(data.get("sha", sha)), files=files, truncated=bool(data.get("truncated"))
        )

    async def blob(self, repo: Repo, sha: str) -> bytes:
        gh = await self._installation(repo)
        with asking(f"the blob {sha[:12]} of {repo}"):
            response = await gh.rest.git.async_get_blob(repo.owner, repo.name, sha)
        data = json_of(response)
        if data.get("encoding") != "base64":
            return str(data.get("content", "")).encode()
        return base64.b64decode(str(data.get("content", "")))

    async def user_from_oauth_code(self, code: str, redirect_uri: str) -> GitHubUser:
        if not self._client_id or not self._client_secret:
            raise HbenchError(
                "github-not-configured",
                "GitHub sign-in is not configured: set HBENCH_GITHUB_CLIENT_ID and "
                "HBENCH_GITHUB_CLIENT_SECRET",
            )
        oauth = self._github(OAuthAppAuthStrategy(self._client_id, self._client_secret))
        web = OAuthWebAuthStrategy(self._client_id, self._client_secret, code, redirect_uri)
        try:
            token = await web.async_exchange_token(oauth)
            # Held in a name: githubkit's namespaces keep only a weak reference to it.
            as_user = oauth.with_auth(token)
            response = await as_user.rest.users.async_get_authenticated()
        except AuthExpiredError:
            # GitHub answers a used, expired or foreign code with 200 and an `error` field.
            raise HbenchError(
                "oauth-exchange-failed",
                "GitHub did not accept the sign-in code (used, expired, or for another "
                "App); sign in again",
            ) from None
        except RequestFailed as failed:
            raise request_failed(failed, "the signed-in user", "oauth-exchange-failed") from None
        except RequestError as error:
            raise unreachable(error, "the signed-in user") from None
        return user_from(json_of(response))

"""Installation tokens for the data-repo writer: the App's `TokenProvider`
(`app/datarepo/git.py`), for pushing to the data repository in GitHub mode.

Synchronous, since the writer runs git in a thread of its own. Each token is asked for
down-scoped to the data repository alone with `contents: write`, so a token that leaks
from a git process can touch nothing else; it is reused until five minutes before it
expires (GitHub's last an hour).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import httpx
from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import GitHubException

from app.github.models import Repo
from app.settings import Settings
from hbench.errors import HbenchError

RENEW_BEFORE_EXPIRY = timedelta(minutes=5)
TIMEOUT_SECONDS = 10.0


class InstallationTokens:
    """Tokens of the App's installation on one repository, able to write its contents."""

    def __init__(
        self,
        *,
        base_url: str,
        app_id: int,
        private_key: str,
        repository: Repo,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.repository = repository
        self._github = GitHub(
            AppAuthStrategy(app_id, private_key),
            base_url=base_url,
            transport=transport,
            http_cache=False,
            cache_strategy=MemCacheStrategy(),
            timeout=TIMEOUT_SECONDS,
            user_agent="hbench",
        )
        self._lock = threading.Lock()
        self._token: tuple[str, datetime] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> InstallationTokens | None:
        """The writer's token provider in GitHub mode; None in local mode, which pushes to
        a local repository."""
        key = settings.github_private_key
        if settings.mode != "github" or settings.github_app_id is None or key is None:
            return None
        if settings.data_repository is None:
            return None
        return cls(
            base_url=settings.github_api_url,
            app_id=settings.github_app_id,
            private_key=key.get_secret_value(),
            repository=Repo.parse(settings.data_repository),
        )

    def installation_token(self, now: datetime | None = None) -> str:
        """A token good for at least five more minutes, minted when the last one isn't."""
        moment = now or datetime.now(UTC)
        with self._lock:
            if self._token is None or self._token[1] - moment < RENEW_BEFORE_EXPIRY:
                self._token = self._mint()
            return self._token[0]

    def _mint(self) -> tuple[str, datetime]:
        repo = self.repository
        try:
            installation = self._github.rest.apps.get_repo_installation(repo.owner, repo.name)
            answer = self._github.rest.apps.create_installation_access_token(
                int(installation.raw_response.json()["id"]),
                repositories=[repo.name],
                permissions={"contents": "write"},
            )
            data = answer.raw_response.json()
            token, expires = str(data["token"]), str(data["expires_at"])
            return token, datetime.strptime(expires, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except (GitHubException, KeyError, ValueError) as error:
            raise HbenchError(
                "datarepo-token-unavailable",
                f"no installation token for {repo}: is the App installed there, with "
                f"contents: write? ({type(error).__name__})",
            ) from None

"""The service's settings: one typed object, read from `HBENCH_*` variables once, checked at start.

Nothing else in the service reads the environment. Handlers get the settings through the
`get_settings` dependency, which tests override with their own object. Every setting is
explained in `docs/settings.md` (held to this class by `tests/app/test_settings.py`).
"""

from __future__ import annotations

import ipaddress
import os
import re
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from hbench.errors import HbenchError, Problem
from hbench.limits import (
    JOB_MAX_BYTES,
    JOB_UNPACKED_MAX_BYTES,
    PUBLISH_WINDOW,
    RUN_TOKEN_LIFETIME,
    UNPACKED_MAX_BYTES,
    UPLOAD_MAX_BYTES,
)

ENV_PREFIX = "HBENCH_"

# GitHub's own rules: a login is 1-39 alphanumerics or single hyphens, not at either end.
# (pydantic's regex engine has no look-ahead, so the length is a separate check.)
LOGIN_PATTERN = r"^[A-Za-z0-9](?:-?[A-Za-z0-9])*$"
LOGIN_MAX_LENGTH = 39
REPOSITORY_PATTERN = r"^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$"
VERSION_PATTERN = r"^\d+\.\d+\.\d+$"
TRUSTED_WORKFLOW_PATTERN = (
    r"[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}/\.github/workflows/[^@\s=]+\.ya?ml@[^\s=]+"
    r"=[0-9a-f]{40}"
)
"""A reusable workflow at a released ref, and the commit that ref named at the release."""
# S3's rules for a bucket's name: 3-63 lower-case letters, digits, dots and hyphens.
BUCKET_PATTERN = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"

# Values people paste from templates and examples. A secret that is one of these (or that
# is this short) protects nothing, so GitHub mode refuses to start with it.
PLACEHOLDER_SECRETS = frozenset(
    {"changethis", "changeme", "change-me", "secret", "password", "placeholder", "example",
     "test", "todo", "xxx", "none", "null", "default"}
)  # fmt: skip
MIN_SECRET_LENGTH = 16

Mode = Literal["local", "github"]


class Settings(BaseSettings):
    """Everything the service is configured with; see `docs/settings.md`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", frozen=True, hide_input_in_errors=True
    )

    mode: Mode = "local"
    state_dir: Path = Path(".state")
    database_url: str | None = Field(default=None, repr=False)
    local_login: str = Field(default="local", pattern=LOGIN_PATTERN, max_length=LOGIN_MAX_LENGTH)

    github_app_id: int | None = Field(default=None, gt=0)
    github_private_key: SecretStr | None = None
    github_webhook_secret: SecretStr | None = None
    github_client_id: str | None = None
    github_client_secret: SecretStr | None = None
    data_repository: str | None = Field(default=None, pattern=REPOSITORY_PATTERN)
    # GitHub account ids, never logins: a login can be renamed, and then taken by another.
    maintainers: Annotated[tuple[int, ...], NoDecode] = ()
    public_url: str | None = None
    session_secret: SecretStr | None = None
    session_lifetime: timedelta = Field(default=timedelta(days=7), gt=timedelta(0))
    github_api_url: str = "https://api.github.com"
    oidc_issuer: str = "https://token.actions.githubusercontent.com"
    trusted_workflows: Annotated[tuple[str, ...], NoDecode] = ()
    # The Sigstore trusted root signatures of manifests are checked against (app/checks/
    # signature.py); None: Sigstore's public root, as sigstore-python ships it.
    sigstore_trusted_root: Path | None = None
    # Where to report a security problem privately: an email address or an https:// page,
    # shown on the guide's Security page (app/web/guide.py).
    security_contact: str | None = None

    min_hbench_version: str = Field(default="0.3.0", pattern=VERSION_PATTERN)
    upload_max_bytes: int = Field(default=UPLOAD_MAX_BYTES, gt=0)
    unpacked_max_bytes: int = Field(default=UNPACKED_MAX_BYTES, gt=0)
    # Uploads in parts (app/bench/parts.py): the most any board's caps may allow a job, how
    # long a session may take, and how many one account may have open at once.
    job_max_bytes: int = Field(default=JOB_MAX_BYTES, gt=0)
    job_unpacked_max_bytes: int = Field(default=JOB_UNPACKED_MAX_BYTES, gt=0)
    upload_session_lifetime: timedelta = Field(default=timedelta(hours=24), gt=timedelta(0))
    upload_sessions_per_account: int = Field(default=4, ge=1, le=1000)
    upload_max_redactions: int = Field(default=100_000, ge=1)
    # Upload workers (app/bench/pool.py): the processes that check, redact and store uploads.
    upload_workers: int = Field(default=2, ge=1, le=64)
    run_token_lifetime: timedelta = Field(default=RUN_TOKEN_LIFETIME, gt=timedelta(0))
    publish_window: timedelta = Field(default=PUBLISH_WINDOW, gt=timedelta(0))
    deleted_files_retention: timedelta = Field(default=timedelta(days=7), ge=timedelta(0))
    maintenance_interval: timedelta = Field(default=timedelta(minutes=5), gt=timedelta(0))
    # Reports and the runs API (app/reports/, app/v1/): how many, per window.
    reports_per_hour: int = Field(default=5, ge=1)
    runs_per_ip_per_day: int = Field(default=30, ge=1)
    runs_per_user_per_day: int = Field(default=200, ge=1)
    # Request bodies (app/http/bodies.py): how slowly one may arrive; and the proxies whose
    # forwarded client addresses are believed (app/http/forwarded.py).
    body_grace_period: timedelta = Field(default=timedelta(seconds=10), gt=timedelta(0))
    body_min_rate: int = Field(default=4 * 1024, ge=1)
    body_deadline_rate: int = Field(default=64 * 1024, ge=1)
    trusted_proxies: Annotated[tuple[str, ...], NoDecode] = ()

    # The blob store (app/blobs/): a local folder, or an S3-compatible bucket that several
    # replicas share. Credentials come from the standard AWS variables (docs/settings.md).
    blob_store: Literal["local", "s3"] = "local"
    s3_endpoint: str | None = None
    s3_bucket: str | None = Field(default=None, pattern=BUCKET_PATTERN)
    s3_region: str = Field(default="us-east-1", pattern=r"^[a-z0-9-]{1,40}$")
    s3_public_endpoint: str | None = None
    s3_presign: bool = True
    s3_presign_lifetime: timedelta = Field(
        default=timedelta(seconds=60), ge=timedelta(seconds=1), le=timedelta(days=7)
    )
    s3_part_size: int = Field(default=8 * 1024 * 1024, ge=5 * 1024 * 1024, le=5 * 1024**3)

    # How many processes `hbench-app serve` answers requests with (None: see `serve_workers`).
    workers: int | None = Field(default=None, ge=1, le=64)

    # What an operator watches (app/observe/): the logs' format, and GET /metrics.
    log_format: Literal["text", "json"] = "text"
    metrics_enabled: bool = True

    data_repository_url: str | None = None
    writer_enabled: bool = True
    writer_batch_size: int = Field(default=100, ge=1, le=10_000)
    writer_max_attempts: int = Field(default=5, ge=1)
    writer_poll_interval: timedelta = Field(default=timedelta(seconds=5), gt=timedelta(0))
    site_follow: bool = False

    # Regrading uploaded jobs (app/regrade/): a worker process runs the tasks' verifiers
    # again on the recorded outputs, in a sandbox.
    regrade_enabled: bool = True
    regrade_worker: Literal["embedded", "separate"] = "embedded"
    regrade_environment: Literal["bubblewrap", "docker"] = "bubblewrap"
    regrade_tasks_dir: Path | None = None
    regrade_timeout: timedelta = Field(default=timedelta(minutes=30), gt=timedelta(0))
    regrade_poll_interval: timedelta = Field(default=timedelta(seconds=2), gt=timedelta(0))
    regrade_max_attempts: int = Field(default=3, ge=1, le=20)
    regrade_concurrency: int = Field(default=2, ge=1, le=64)

    @field_validator("regrade_tasks_dir", "sigstore_trusted_root")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        # Read from where the service started: an upload worker, another process, may work
        # in another folder (`app.services.ServicesRecipe`).
        return value.absolute() if value is not None else None

    @field_validator("maintainers", mode="before")
    @classmethod
    def _split_account_ids(cls, value: object) -> object:
        # `HBENCH_MAINTAINERS=583231, 9919` reads better in an env file than a JSON list.
        if isinstance(value, str):
            value = tuple(item.strip() for item in value.split(",") if item.strip())
        if isinstance(value, tuple | list):
            bad = [str(item) for item in value if not is_account_id(item)]
            if bad:
                raise ValueError(
                    f"not GitHub account ids: {', '.join(bad)}; name each maintainer by the "
                    "number GitHub gave their account, never by login (a login can be "
                    "renamed and taken by someone else): the `id` of "
                    "https://api.github.com/users/<login>"
                )
            return tuple(int(item) for item in value)
        return value

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _check_proxies(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [item for item in value if proxy_network(item) is None]
        if bad:
            raise ValueError(
                f"not IP addresses or networks: {', '.join(bad)}; name each proxy by its "
                "address (10.0.0.5) or its network (10.0.0.0/24), never a host name or *"
            )
        return tuple(str(proxy_network(item)) for item in value)

    @field_validator(
        "run_token_lifetime",
        "publish_window",
        "deleted_files_retention",
        "maintenance_interval",
        "writer_poll_interval",
        "regrade_timeout",
        "regrade_poll_interval",
        "body_grace_period",
        "s3_presign_lifetime",
        "upload_session_lifetime",
        mode="before",
    )
    @classmethod
    def _seconds_as_duration(cls, value: object) -> object:
        # pydantic reads ISO 8601 (`PT48H`) from a string, but not a plain count of seconds.
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        return value

    @field_validator("trusted_workflows", mode="before")
    @classmethod
    def _split_workflows(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(entry.strip() for entry in value.split(",") if entry.strip())
        return value

    @field_validator("trusted_workflows")
    @classmethod
    def _check_workflows(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [entry for entry in value if not re.fullmatch(TRUSTED_WORKFLOW_PATTERN, entry)]
        if bad:
            raise ValueError(
                f"not OWNER/REPO/.github/workflows/FILE.yml@REF=SHA (a 40-hex commit): "
                f"{', '.join(bad)}"
            )
        return value

    @field_validator("session_lifetime", mode="before")
    @classmethod
    def _session_seconds(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        return value

    @field_validator("public_url", "github_api_url", "oidc_issuer")
    @classmethod
    def _check_service_url(cls, value: str | None) -> str | None:
        # Secrets (the App's JWT, OAuth codes, session cookies) travel to and from these
        # URLs: TLS only, except to this machine, where the tests' fakes listen.
        if value is None:
            return value
        if not is_service_url(value):
            raise ValueError(
                "use an https:// URL with no user name, query or fragment "
                "(http:// only to 127.0.0.1 or localhost)"
            )
        return value.rstrip("/")

    @field_validator("security_contact")
    @classmethod
    def _check_security_contact(cls, value: str | None) -> str | None:
        # Shown as a link to everyone: an address to write to, or a page over TLS.
        if value is None:
            return value
        value = value.strip()
        if re.fullmatch(r"[^@\s<>\"]+@[^@\s<>\"]+\.[^@\s<>\".]+", value) is None and not (
            value.startswith("https://") and is_service_url(value)
        ):
            raise ValueError(
                "use an email address (security@example.org) or an https:// page with no "
                "user name, query or fragment"
            )
        return value

    @field_validator("s3_endpoint", "s3_public_endpoint")
    @classmethod
    def _check_s3_endpoint(cls, value: str | None) -> str | None:
        # Requests to the store are signed, never carry the secret key; plain HTTP is
        # allowed for a store on a private network (a compose file's MinIO).
        if value is None:
            return value
        parts = urlsplit(value)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.username
            or parts.password
            or parts.query
            or parts.fragment
        ):
            raise ValueError(
                "use an http:// or https:// URL with no user name, query or fragment, such "
                "as http://minio:9000; credentials go in AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY"
            )
        return value.rstrip("/")

    @model_validator(mode="after")
    def _refuse_s3_without_bucket(self) -> Settings:
        if self.blob_store == "s3" and self.s3_bucket is None:
            raise HbenchError(
                "settings-missing",
                f"{env_name('blob_store')}=s3 needs {env_name('s3_bucket')}: the bucket "
                "that holds the blobs, made beforehand",
            )
        return self

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("sqlite", "postgresql+psycopg://")):
            raise ValueError("use sqlite:///PATH or postgresql+psycopg://USER@HOST:PORT/NAME")
        return value

    @field_validator("data_repository_url")
    @classmethod
    def _check_data_repository_url(cls, value: str | None) -> str | None:
        # The installation token travels in a header of every request to this URL: only
        # over TLS (plain HTTP to this machine is allowed, for a test server), and never
        # with credentials of its own in the URL.
        if value is not None and not is_service_url(value):
            raise ValueError(
                "use an https:// URL with no user name or token: the App's token is sent "
                "apart (http:// only to 127.0.0.1 or localhost)"
            )
        return value

    @model_validator(mode="after")
    def _refuse_unsafe_github_mode(self) -> Settings:
        # An HbenchError is not a ValueError, so pydantic lets it through unwrapped,
        # carrying every problem at once rather than the first.
        problems = github_mode_problems(self)
        if problems:
            raise HbenchError.from_problems(problems)
        return self

    @property
    def sqlite_path(self) -> Path:
        """The SQLite file used when no `database_url` is set."""
        return self.state_dir / "hbench.sqlite3"

    @property
    def blob_dir(self) -> Path:
        """The folder of the local blob store: job archives and their files."""
        return self.state_dir / "blobs"

    @property
    def upload_dir(self) -> Path:
        """Where each upload is unpacked and checked, in a private folder removed after."""
        return self.state_dir / "uploads"

    @property
    def regrade_dir(self) -> Path:
        """Where the regrade worker unpacks each job and grades it, removed after."""
        return self.state_dir / "regrades"

    @property
    def serve_workers(self) -> int:
        """`workers`, or by default one process on SQLite (the embedded default, where a
        second process only waits for the database's one writer) and one per core on a
        database server."""
        if self.workers is not None:
            return self.workers
        if self.effective_database_url.startswith("sqlite"):
            return 1
        return max(1, os.cpu_count() or 1)

    @property
    def data_repository_dir(self) -> Path:
        """The writer's checkout of the data repository (the site reads it too)."""
        return self.state_dir / "data"

    @property
    def data_repository_remote_dir(self) -> Path:
        """The bare repository the writer pushes to in local mode: GitHub's stand-in."""
        return self.state_dir / "data.git"

    @property
    def data_repository_git_url(self) -> str:
        """Where the writer pushes: the local bare repository, or the GitHub repository."""
        if self.mode == "local":
            return str(self.data_repository_remote_dir.resolve())
        return self.data_repository_url or f"https://github.com/{self.data_repository}.git"

    @property
    def site_dir(self) -> Path:
        """The static site built from the data repository, served at `/site`."""
        return self.state_dir / "site"

    @property
    def effective_database_url(self) -> str:
        """`database_url`, or the SQLite file in the state directory."""
        return self.database_url or f"sqlite+pysqlite:///{self.sqlite_path.resolve()}"

    def is_maintainer(self, github_id: int | None) -> bool:
        """Whether a GitHub account, by its id, is one of the maintainers. (An account that
        never signed in with GitHub has no id, and is none.)"""
        return github_id is not None and github_id in self.maintainers


GITHUB_REQUIRED: tuple[tuple[str, str], ...] = (
    ("github_app_id", "the GitHub App's id, from its settings page"),
    ("github_private_key", "the App's private key (PEM), generated on its settings page"),
    ("github_webhook_secret", "the webhook secret entered on the App's settings page"),
    ("github_client_id", "the App's OAuth client id"),
    ("github_client_secret", "an OAuth client secret generated on the App's settings page"),
    ("data_repository", "the data repository, as owner/name"),
    ("public_url", "the service's public URL: OAuth callbacks and the OIDC audience"),
    ("session_secret", "a long random value that signs sign-in session cookies"),
)
GITHUB_SECRETS = ("github_webhook_secret", "github_client_secret", "session_secret")


def github_mode_problems(settings: Settings) -> list[Problem]:
    """Every reason these settings can't run in GitHub mode (none in local mode)."""
    if settings.mode != "github":
        return []
    problems = [
        Problem("settings-missing", f"GitHub mode needs {env_name(field)}: {what}")
        for field, what in GITHUB_REQUIRED
        if getattr(settings, field) is None
    ]
    for field in GITHUB_SECRETS:
        secret: SecretStr | None = getattr(settings, field)
        if secret is not None and is_placeholder(secret.get_secret_value()):
            problems.append(
                Problem(
                    "settings-placeholder-secret",
                    f"{env_name(field)} is a placeholder or shorter than {MIN_SECRET_LENGTH} "
                    "characters; set it to a long random value",
                )
            )
    key = settings.github_private_key
    if key is not None and not looks_like_pem_key(key.get_secret_value()):
        problems.append(
            Problem(
                "settings-placeholder-secret",
                f"{env_name('github_private_key')} is not a PEM private key; set it to the "
                "contents of the .pem file GitHub generated",
            )
        )
    return problems


def is_login(name: str) -> bool:
    """Whether a name is a valid GitHub login."""
    return len(name) <= LOGIN_MAX_LENGTH and re.fullmatch(LOGIN_PATTERN, name) is not None


def is_account_id(value: object) -> bool:
    """Whether a value is a GitHub account id: a positive whole number."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > 0
    return isinstance(value, str) and value.isdigit() and int(value) > 0


def proxy_network(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """A proxy's address or network as a network (an address is a network of one)."""
    try:
        return ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return None


def is_placeholder(secret: str) -> bool:
    """A secret copied from an example, or too short to resist guessing."""
    value = secret.strip()
    return len(value) < MIN_SECRET_LENGTH or value.lower() in PLACEHOLDER_SECRETS


def is_service_url(url: str) -> bool:
    """An https:// URL (or http:// to this machine) with no credentials, query or fragment."""
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query or parts.fragment or not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and parts.hostname in {"127.0.0.1", "localhost", "::1"}


def looks_like_pem_key(text: str) -> bool:
    return bool(re.search(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.+-----END", text, re.DOTALL))


def env_name(field: str) -> str:
    return f"{ENV_PREFIX}{field.upper()}"


def load_settings(**overrides: object) -> Settings:
    """Read the settings from the environment (overrides win), or refuse with every problem."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]  # keyword overrides of fields
    except ValidationError as error:
        raise HbenchError.from_problems(
            [
                Problem(
                    "settings-invalid",
                    f"{env_name(str(item['loc'][0])) if item['loc'] else 'settings'}: "
                    f"{item['msg']}",
                )
                for item in error.errors()
            ]
        ) from None


@cache
def get_settings() -> Settings:
    """The settings, read once per process. A FastAPI dependency: tests override it."""
    return load_settings()

"""The settings: read from `HBENCH_*` once, checked at start, every one documented."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from app.settings import ENV_PREFIX, Settings, get_settings, load_settings
from hbench.errors import HbenchError
from hbench.limits import UNPACKED_MAX_BYTES, UPLOAD_MAX_BYTES

from .conftest import GITHUB

DOCS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def refusal(**values: object) -> HbenchError:
    with pytest.raises(HbenchError) as refused:
        load_settings(**values)
    return refused.value


def test_settings_are_documented() -> None:
    documented = re.findall(r"^### `(HBENCH_[A-Z0-9_]+)`$", DOCS.read_text(), re.MULTILINE)
    fields = [f"{ENV_PREFIX}{name.upper()}" for name in Settings.model_fields]
    assert sorted(set(fields) - set(documented)) == [], "settings missing from docs/settings.md"
    assert sorted(set(documented) - set(fields)) == [], "docs/settings.md names no such setting"
    assert len(documented) == len(set(documented)), "a setting is documented twice"


def test_the_defaults_run_locally_in_dot_state() -> None:
    settings = load_settings()
    assert settings.mode == "local"
    assert settings.state_dir == Path(".state")
    assert settings.sqlite_path == Path(".state/hbench.sqlite3")
    assert settings.blob_dir == Path(".state/blobs")
    assert settings.data_repository_dir == Path(".state/data")
    assert settings.effective_database_url == (
        f"sqlite+pysqlite:///{Path('.state/hbench.sqlite3').resolve()}"
    )
    assert settings.min_hbench_version == "0.3.0"
    assert settings.upload_max_bytes == UPLOAD_MAX_BYTES == 95 * 1024 * 1024
    assert settings.unpacked_max_bytes == UNPACKED_MAX_BYTES == 512 * 1024 * 1024
    assert settings.run_token_lifetime == timedelta(hours=48)
    assert settings.publish_window == timedelta(days=30)


def test_settings_come_from_hbench_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HBENCH_STATE_DIR", "/srv/hbench")
    monkeypatch.setenv("HBENCH_DATABASE_URL", "postgresql+psycopg://hbench@db:5432/hbench")
    monkeypatch.setenv("HBENCH_MAINTAINERS", "alice, Bob ,")
    monkeypatch.setenv("HBENCH_RUN_TOKEN_LIFETIME", "PT24H")
    monkeypatch.setenv("HBENCH_PUBLISH_WINDOW", "86400")
    settings = load_settings()
    assert settings.state_dir == Path("/srv/hbench")
    assert settings.effective_database_url == "postgresql+psycopg://hbench@db:5432/hbench"
    assert settings.maintainers == ("alice", "Bob")
    assert settings.is_maintainer("bob") and not settings.is_maintainer("carol")
    assert settings.run_token_lifetime == timedelta(hours=24)
    assert settings.publish_window == timedelta(days=1)


def test_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HBENCH_STATE_DIR", "/from/env")
    assert load_settings(state_dir=Path("/from/flag")).state_dir == Path("/from/flag")


def test_settings_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    get_settings.cache_clear()
    try:
        first = get_settings()
        monkeypatch.setenv("HBENCH_LOCAL_LOGIN", "someone-else")
        assert get_settings() is first
    finally:
        get_settings.cache_clear()


def test_wrong_values_are_refused_naming_each_variable() -> None:
    error = refusal(mode="cloud", upload_max_bytes=0, local_login="-bad-", maintainers="a b")
    assert {p.code for p in error.problems} == {"settings-invalid"}
    named = " ".join(p.message for p in error.problems)
    for variable in ("HBENCH_MODE", "HBENCH_UPLOAD_MAX_BYTES", "HBENCH_LOCAL_LOGIN"):
        assert variable in named
    assert "not GitHub logins: a b" in named


@pytest.mark.parametrize(
    "url", ["mysql://root@localhost/hbench", "postgresql://postgres@localhost/hbench"]
)
def test_only_sqlite_and_psycopg_urls_are_taken(url: str) -> None:
    assert refusal(database_url=url).code == "settings-invalid"


def test_the_local_login_is_a_github_login() -> None:
    assert refusal(local_login="a" * 40).code == "settings-invalid"
    assert load_settings(local_login="octo-cat").local_login == "octo-cat"


def test_github_mode_refuses_to_start_without_a_webhook_secret() -> None:
    values = {k: v for k, v in GITHUB.items() if k != "github_webhook_secret"}
    error = refusal(**values)
    assert [p.code for p in error.problems] == ["settings-missing"]
    assert "HBENCH_GITHUB_WEBHOOK_SECRET" in error.detail


def test_github_mode_lists_everything_it_lacks() -> None:
    error = refusal(mode="github")
    missing = [p.message for p in error.problems if p.code == "settings-missing"]
    assert len(missing) == 8
    assert all(m.startswith("GitHub mode needs HBENCH_") for m in missing)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("github_webhook_secret", "changethis"),
        ("github_webhook_secret", "CHANGEME" + " " * 20),
        ("github_webhook_secret", "short-secret"),
        ("github_client_secret", "example"),
        ("github_private_key", "my-key.pem"),
    ],
)
def test_github_mode_refuses_placeholder_secrets(field: str, value: str) -> None:
    error = refusal(**{**GITHUB, field: value})
    assert [p.code for p in error.problems] == ["settings-placeholder-secret"]
    assert f"HBENCH_{field.upper()}" in error.detail
    assert value.strip() not in error.detail


def test_github_mode_starts_with_real_looking_settings() -> None:
    settings = load_settings(**GITHUB)
    assert settings.mode == "github"
    assert settings.github_webhook_secret is not None
    assert "a-webhook-secret" not in repr(settings)


def test_local_mode_ignores_github_secrets() -> None:
    assert load_settings(github_webhook_secret="changethis").mode == "local"


def test_secrets_never_appear_in_a_refusal() -> None:
    error = refusal(github_app_id="not-a-number", github_webhook_secret=["hunter2-hunter2"])
    assert "hunter2" not in str(error.problems)

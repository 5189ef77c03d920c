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
    monkeypatch.setenv("HBENCH_MAINTAINERS", "583231, 9919 ,")
    monkeypatch.setenv("HBENCH_RUN_TOKEN_LIFETIME", "PT24H")
    monkeypatch.setenv("HBENCH_PUBLISH_WINDOW", "86400")
    settings = load_settings()
    assert settings.state_dir == Path("/srv/hbench")
    assert settings.effective_database_url == "postgresql+psycopg://hbench@db:5432/hbench"
    assert settings.maintainers == (583231, 9919)
    assert settings.is_maintainer(9919) and not settings.is_maintainer(1)
    assert not settings.is_maintainer(None)
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
    assert "not GitHub account ids: a b" in named


@pytest.mark.parametrize("value", ["alice", "alice,583231", "-5", "0", "583231.0"])
def test_maintainers_are_github_account_ids_never_logins(value: str) -> None:
    refused = refusal(maintainers=value)
    assert refused.code == "settings-invalid"
    assert "HBENCH_MAINTAINERS" in str(refused)
    assert "https://api.github.com/users/<login>" in str(refused)


def test_trusted_proxies_are_addresses_or_networks() -> None:
    assert load_settings().trusted_proxies == ()
    taken = load_settings(trusted_proxies="10.0.0.5, 192.168.0.0/16,fd00::/8")
    assert taken.trusted_proxies == ("10.0.0.5/32", "192.168.0.0/16", "fd00::/8")
    for bad in ("*", "proxy.internal", "10.0.0.300"):
        refused = refusal(trusted_proxies=bad)
        assert refused.code == "settings-invalid"
        assert "HBENCH_TRUSTED_PROXIES" in str(refused)


def test_bodies_have_a_pace_with_sane_defaults() -> None:
    settings = load_settings()
    assert settings.body_grace_period == timedelta(seconds=10)
    assert settings.body_min_rate == 4096
    assert settings.body_deadline_rate == 65536
    assert load_settings(body_grace_period="30").body_grace_period == timedelta(seconds=30)
    assert refusal(body_min_rate=0).code == "settings-invalid"


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

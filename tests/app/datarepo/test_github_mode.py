"""GitHub mode: the writer pushes over HTTPS-style git with the installation token in a
header of each command, and the token is nowhere else: not in `.git/config`, the remote
URL, git's argument lists, the logs, or an error message."""

from __future__ import annotations

import base64
import logging
import secrets
import stat
from pathlib import Path

import pytest

from app.datarepo.git import Git, Remote, git_executable
from app.datarepo.lock import writer_lock
from app.datarepo.outbox import enqueue
from app.datarepo.repo_init import create_data_repository
from app.datarepo.service import start_background_writer, writer_for
from app.db.session import Database
from app.settings import Settings, load_settings
from hbench.errors import HbenchError
from registry.datarepo import layout

from ..conftest import GITHUB, github_settings
from .conftest import publish, remote_state
from .git_http_server import serve_git


class StaticTokens:
    """A token provider handing out one token, as the GitHub App's would for an hour."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.calls = 0

    def installation_token(self) -> str:
        self.calls += 1
        return self.token


def new_token() -> str:
    return "ghs_" + secrets.token_urlsafe(27)


def secret_forms(token: str) -> list[str]:
    return [token, base64.b64encode(f"x-access-token:{token}".encode()).decode()]


@pytest.fixture
def github_remote(tmp_path: Path) -> Path:
    """The served folder, holding `hbench/data.git` as github.com holds owner/name."""
    root = tmp_path / "github"
    create_data_repository(root / "hbench" / "data.git", bare=True)
    return root


@pytest.fixture
def git_argv_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every argument list the writer runs git with, through a `git` first on the PATH."""
    log = tmp_path / "git-argv.log"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {git_executable()} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{Path(git_executable()).parent}")
    return log


def test_github_mode_pushes_with_the_token_in_a_header_and_nowhere_else(
    settings: Settings,
    database: Database,
    github_remote: Path,
    git_argv_log: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    token = new_token()
    tokens = StaticTokens(token)
    with serve_git(github_remote, token) as server:
        github = github_settings(settings, data_repository_url=server.url("hbench/data.git"))
        writer = writer_for(github, database, tokens)
        with database.session() as session:
            enqueue(session, publish(1))
            enqueue(session, publish(2))
            session.commit()
        with writer_lock(database, wait=5):
            report = writer.drain()
    assert (report.applied, report.commits) == (2, 1)
    state = remote_state(github_remote / "hbench" / "data.git")
    assert layout.run_file("hbench-demo", "run-0002") in state.files

    # The token travelled in the header of git's requests, fetched fresh for each command.
    assert tokens.calls >= 3  # the first fetch, a fetch per batch, the push
    authorized = [h.get("Authorization") for _, _, h in server.requests]
    assert authorized and set(authorized) == {server.expected_authorization}
    # And nowhere else.
    checkout = github.data_repository_dir
    origin = Git(checkout / ".git", checkout).run("remote", "get-url", "origin").stdout.strip()
    assert origin == server.url("hbench/data.git")
    kept = [p.read_bytes().decode("latin-1") for p in (checkout / ".git").rglob("*") if p.is_file()]
    places = {
        "request paths": " ".join(path for _, path, _ in server.requests),
        "the remote URL": origin,
        ".git/config": (checkout / ".git" / "config").read_text(),
        "the checkout's git files": "\n".join(kept),
        "git's argument lists": git_argv_log.read_text(),
        "the logs": caplog.text,
        "the data repository": "\n".join(state.files.values()),
    }
    for where, text in places.items():
        for form in secret_forms(token):
            assert form not in text, f"the token is in {where}"
    assert "extraheader" not in places[".git/config"].lower()


def test_a_refused_token_fails_with_gits_message_and_no_secret(
    settings: Settings,
    database: Database,
    github_remote: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = new_token()
    with serve_git(github_remote, new_token()) as server:
        github = github_settings(settings, data_repository_url=server.url("hbench/data.git"))
        with pytest.raises(HbenchError) as refused:
            writer_for(github, database, StaticTokens(wrong)).drain()
    assert refused.value.code == "datarepo-git-failed"
    assert "terminal prompts disabled" in refused.value.detail  # no helper, no prompt
    for form in secret_forms(wrong):
        assert form not in str(refused.value) and form not in caplog.text


def test_git_output_that_would_show_the_token_is_redacted(tmp_path: Path) -> None:
    token = new_token()
    repo = tmp_path / "data.git"
    create_data_repository(repo, bare=True)
    remote = Remote("https://github.com/hbench/data.git", StaticTokens(token))
    git = Git(repo)
    shown = git.run("config", "--get-all", "http.extraHeader", remote=remote).stdout
    assert shown.strip() == "Authorization: Basic [REDACTED]"
    with pytest.raises(HbenchError) as failed:  # git quotes the value in its complaint
        git.run("config", "--type=bool", "--get", "http.extraHeader", remote=remote)
    assert failed.value.code == "datarepo-git-failed"
    assert "[REDACTED]" in failed.value.detail
    for form in secret_forms(token):
        assert form not in failed.value.detail


def test_github_mode_without_a_token_provider_does_not_write(
    settings: Settings, database: Database
) -> None:
    github = github_settings(settings)
    assert start_background_writer(github, database) is None
    with pytest.raises(HbenchError) as refused:
        writer_for(github, database)
    assert refused.value.code == "datarepo-token-unavailable"


def test_the_data_repository_url_carries_no_credentials_and_needs_tls() -> None:
    github = load_settings(**GITHUB)
    assert github.data_repository_git_url == "https://github.com/hbench/data.git"
    enterprise = "https://git.example.com/hbench/data.git"
    assert load_settings(**GITHUB, data_repository_url=enterprise).data_repository_git_url == (
        enterprise
    )
    for refused in [
        "http://git.example.com/hbench/data.git",
        "https://x-access-token:ghs_abc@github.com/hbench/data.git",
        "git@github.com:hbench/data.git",
    ]:
        with pytest.raises(HbenchError) as caught:
            load_settings(**GITHUB, data_repository_url=refused)
        assert caught.value.code == "settings-invalid"
        assert "ghs_abc" not in str(caught.value)
    assert load_settings(data_repository_url="http://127.0.0.1:9/data.git").data_repository_url

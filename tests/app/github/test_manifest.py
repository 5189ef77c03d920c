"""The GitHub App's manifest and GitHub's manifest flow: `hbench-app github-app create`
shows a page whose form sends the manifest to GitHub (here the fake, over real HTTP),
takes the browser's return, and writes the new App's settings to an owner-only env file
that the service then starts with."""

from __future__ import annotations

import html
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from dotenv import dotenv_values

from app.github.manifest import PERMISSIONS, app_manifest, convert, events
from app.settings import Settings, github_mode_problems
from hbench.errors import HbenchError
from tests.fakes.github.server import serve_fake_github
from tests.fakes.github.state import FakeGitHub

HBENCH_APP = str(Path(sys.executable).with_name("hbench-app"))
PUBLIC = "https://hbench.example.org"


def test_the_manifest_subscribes_to_the_events_the_app_routes_and_names_its_addresses() -> None:
    manifest = app_manifest(PUBLIC, name="hbench-test", redirect_url="http://127.0.0.1:1/done")
    assert manifest["default_events"] == events() == ["issue_comment", "pull_request"]
    assert manifest["default_permissions"] == PERMISSIONS
    assert manifest["hook_attributes"] == {"url": f"{PUBLIC}/api/github/webhooks", "active": True}
    assert manifest["callback_urls"] == [f"{PUBLIC}/auth/github/callback"]
    docs = (Path(__file__).parents[3] / "docs" / "github-app.md").read_text()
    assert "Issue comment and Pull request" in docs  # the setting-up section says the same


@pytest.mark.timeout(120)
def test_create_makes_the_app_and_writes_its_settings_for_the_service(
    rsa_keys: list[RSAPrivateKey], tmp_path: Path
) -> None:
    fake = FakeGitHub(rsa_keys[0], rsa_keys[1:])
    env_file = tmp_path / "app.env"
    with serve_fake_github(fake) as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
        env["HBENCH_GITHUB_API_URL"] = f"{url}/api/v3"
        command = subprocess.Popen(
            [HBENCH_APP, "github-app", "create", "--public-url", PUBLIC, "--name", "hbench-test",
             "--env-file", str(env_file), "--no-browser", "--timeout", "60"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert command.stdout is not None
        page_url = re.search(r"Open (\S+) in a browser", command.stdout.readline())
        assert page_url, command.stderr.read() if command.stderr else ""
        with httpx.Client(timeout=10) as browser:
            page = browser.get(page_url.group(1)).text
            action = html.unescape(re.search(r'action="([^"]+)"', page).group(1))  # type: ignore[union-attr]
            manifest = html.unescape(re.search(r'name=manifest value="([^"]+)"', page).group(1))  # type: ignore[union-attr]
            assert action.startswith(f"{url}/settings/apps/new?state=")
            done = browser.post(action, data={"manifest": manifest}, follow_redirects=True)
        output, errors = command.communicate(timeout=30)
    assert command.returncode == 0, errors
    assert done.status_code == 200 and "The App is made" in done.text
    assert fake.app.private_key_pem not in done.text + output + errors
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600

    values = dotenv_values(env_file)
    assert values["HBENCH_GITHUB_APP_ID"] == str(fake.app.id)
    assert values["HBENCH_GITHUB_PRIVATE_KEY"] == fake.app.private_key_pem
    settings = Settings(
        mode="github", public_url=PUBLIC, github_app_id=int(values["HBENCH_GITHUB_APP_ID"] or 0),
        github_private_key=values["HBENCH_GITHUB_PRIVATE_KEY"],
        github_webhook_secret=values["HBENCH_GITHUB_WEBHOOK_SECRET"],
        github_client_id=values["HBENCH_GITHUB_CLIENT_ID"],
        github_client_secret=values["HBENCH_GITHUB_CLIENT_SECRET"],
        session_secret="s" * 8 + os.urandom(24).hex(), data_repository="octo-org/hbench-data",
        state_dir=tmp_path / "state",
    )  # fmt: skip
    assert github_mode_problems(settings) == []  # it started: nothing missing, none a placeholder


def test_a_code_works_once(rsa_keys: list[RSAPrivateKey]) -> None:
    fake = FakeGitHub(rsa_keys[0], rsa_keys[1:])
    fake.manifests["c0de"] = app_manifest(PUBLIC, name="x", redirect_url="http://127.0.0.1/")
    with serve_fake_github(fake) as url:
        assert convert(f"{url}/api/v3", "c0de").id == fake.app.id
        with pytest.raises(HbenchError) as refused:
            convert(f"{url}/api/v3", "c0de")
    assert refused.value.code == "github-app-manifest-failed"

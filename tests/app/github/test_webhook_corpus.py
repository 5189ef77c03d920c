"""GitHub's own example deliveries, every one of `@octokit/webhooks-examples` (the
payloads GitHub's documentation shows, one corpus per event), signed as GitHub signs them
and posted to the App's webhook.

A delivery of an event or action no behaviour acts on is answered 200 `ignored`, is not
recorded, and makes no call to GitHub. One a behaviour acts on is answered 202 and
handled as that behaviour's own check below says (an installation recorded, a comment
read, a registry check run shown), with the fake GitHub holding what the payload names.
None is answered 5xx, and none logs a warning or a traceback.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.models import GitHubInstallation, WebhookDelivery
from app.db.session import Database
from app.github.behaviours import BEHAVIOURS
from app.github.client import GitHubKitClient
from app.github.comments import MARKER
from app.github.port import get_github
from app.github.registry_checks import CHECK_NAME
from app.github.routing import Event
from app.main import create_app
from app.settings import ENV_PREFIX, Settings
from registry.loader import DEFAULT_DIR, read_folder
from tests.fakes.github import FakeGitHub, create_fake_github
from tests.fakes.github.state import FakeRepo, FakeUser
from tests.fakes.github.webhooks import Delivery, deliver, delivery
from tests.support import corpora

from ..conftest import LOCAL, NO_REGRADES, github_settings
from .conftest import FAKE_URL, SERVICE_URL

CORPUS = corpora.WEBHOOK_EXAMPLES
EVENTS, DELIVERIES = 58, 329  # in the pinned version


@dataclass(frozen=True)
class Example:
    """One example delivery: its event, its place in the event's list, its payload."""

    event: str
    index: int
    payload: dict[str, Any]

    @property
    def action(self) -> str | None:
        action = self.payload.get("action")
        return action if isinstance(action, str) else None

    @property
    def name(self) -> str:
        return "-".join(
            str(part) for part in (self.event, self.index, self.action) if part is not None
        )

    @property
    def acted_on(self) -> bool:
        """Whether some behaviour handles it, as the webhook's dispatch decides."""
        return bool(BEHAVIOURS.handlers_for(Event(self.event, self.action, "-", self.payload)))

    def signed(self, fake: FakeGitHub, **changes: Any) -> Delivery:
        """The delivery as GitHub sends it (a fresh delivery id each time), its payload
        with `changes` made first."""
        return delivery(fake, self.event, {**self.payload, **changes})


def corpus_file() -> Path:
    return corpora.npm_package(CORPUS) / "api.github.com" / "index.json"


@cache
def examples() -> list[Example]:
    events = json.loads(corpus_file().read_text(encoding="utf-8"))
    return [
        Example(event["name"], index, payload)
        for event in events
        for index, payload in enumerate(event["examples"])
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test of an example runs once per delivery, named by it; a corpus that can't be
    fetched is one failing test that says why, not an empty parametrization."""
    for fixture, acted_on in (("ignored", False), ("acted_on", True)):
        if fixture not in metafunc.fixturenames:
            continue
        try:
            chosen: list[Example | str] = [e for e in examples() if e.acted_on is acted_on]
            ids = [example.name for example in chosen if isinstance(example, Example)]
        except corpora.CorpusUnavailableError as error:
            chosen, ids = [str(error)], ["corpus-unavailable"]
        metafunc.parametrize(fixture, chosen, ids=ids, indirect=True)


def taken(param: Example | str) -> Example:
    if isinstance(param, str):
        pytest.fail(f"{CORPUS.name}@{CORPUS.version} is out of reach: {param}")
    return param


@pytest.fixture
def ignored(request: pytest.FixtureRequest) -> Example:
    return taken(request.param)


@pytest.fixture
def acted_on(request: pytest.FixtureRequest) -> Example:
    return taken(request.param)


def no_trouble_logged(caplog: pytest.LogCaptureFixture) -> None:
    trouble = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert not trouble, "\n".join(caplog.text.splitlines()[-40:])


def test_the_corpus_is_the_pinned_one() -> None:
    every = examples()
    assert (len({e.event for e in every}), len(every)) == (EVENTS, DELIVERIES)
    acted = {e.event for e in every if e.acted_on}
    assert acted == set(EFFECTS), "each event a behaviour acts on needs its check here"


# -- the deliveries no behaviour acts on, through one service -----------------------------


@dataclass
class Shared:
    fake: FakeGitHub
    client: TestClient
    database: Database

    def recorded(self, delivery_id: str) -> bool:
        with self.database.session() as session:
            return session.get(WebhookDelivery, delivery_id) is not None


def service_of(settings: Settings, fake: FakeGitHub) -> TestClient:
    """The service in GitHub mode as `fake`'s App, its GitHub client talking to `fake`."""
    github = GitHubKitClient(
        base_url=f"{fake.url}/api/v3",
        app_id=fake.app.id,
        private_key=fake.app.private_key_pem,
        client_id=fake.app.client_id,
        client_secret=fake.app.client_secret,
        transport=httpx.ASGITransport(app=create_fake_github(fake)),
        auto_retry=False,
    )
    app = create_app(settings)
    app.dependency_overrides[get_github] = lambda: github
    return TestClient(app, **LOCAL)


@pytest.fixture(scope="module")
def shared(
    rsa_keys: list[RSAPrivateKey],
    migrated_database_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Shared]:
    """One service for every ignored delivery: none of them may change anything."""
    fake = FakeGitHub(rsa_keys[0], rsa_keys[1:], url=FAKE_URL)
    with pytest.MonkeyPatch.context() as env:
        for name in [name for name in os.environ if name.startswith(ENV_PREFIX)]:
            env.delenv(name)
        local = Settings(
            state_dir=tmp_path_factory.mktemp("corpus-service"),
            database_url=migrated_database_url,
            writer_enabled=False,
            **NO_REGRADES,
        )
        settings = github_settings(
            local,
            github_app_id=fake.app.id,
            github_private_key=fake.app.private_key_pem,
            github_webhook_secret=fake.app.webhook_secret,
            github_client_id=fake.app.client_id,
            github_client_secret=fake.app.client_secret,
            github_api_url=f"{fake.url}/api/v3",
            public_url=SERVICE_URL,
            writer_enabled=False,
        )
    database = Database(migrated_database_url)
    with service_of(settings, fake) as client:
        yield Shared(fake, client, database)
    database.dispose()


def test_a_delivery_no_behaviour_acts_on_is_ignored(
    shared: Shared, ignored: Example, caplog: pytest.LogCaptureFixture
) -> None:
    sent = ignored.signed(shared.fake)
    calls = len(shared.fake.seen)
    answer = deliver(shared.client, sent)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"status": "ignored", "delivery": sent.delivery_id, "event": sent.event}
    assert not shared.recorded(sent.delivery_id)
    assert len(shared.fake.seen) == calls
    no_trouble_logged(caplog)


# -- the deliveries a behaviour acts on, each through a service of its own -----------------


@pytest.fixture
def github_mode(github_mode: Settings, acted_on: Example) -> Settings:
    """GitHub mode, with the example's repository as the data repository (so a pull
    request's registry check runs)."""
    repository = acted_on.payload.get("repository") or {}
    return github_mode.model_copy(update={"data_repository": repository.get("full_name")})


@dataclass
class World:
    """The fake GitHub holding what an example names, and the service it talks to."""

    fake: FakeGitHub
    client: TestClient
    db: Session
    example: Example

    def user(self, account: dict[str, Any]) -> FakeUser:
        known = self.fake.users.get(account["id"])
        return known or self.fake.add_user(account["login"], id=account["id"], type=account["type"])

    def repo(self) -> FakeRepo:
        """The example's repository, with the App installed on its owner's account."""
        repository = self.example.payload["repository"]
        owner = self.user(repository["owner"])
        found = self.fake.repo(owner.login, repository["name"])
        if found is not None:
            return found
        repo = self.fake.add_repo(owner, repository["name"], id=repository["id"])
        installation = self.example.payload.get("installation") or {}
        self.fake.install(owner, id=installation.get("id"))
        return repo

    def send(self, **changes: Any) -> None:
        answer = deliver(self.client, self.example.signed(self.fake, **changes))
        assert answer.status_code == 202, answer.text
        assert answer.json()["status"] == "accepted"

    def installation(self, installation_id: int) -> GitHubInstallation | None:
        self.db.expire_all()
        return self.db.get(GitHubInstallation, installation_id)


def installation_recorded(world: World) -> None:
    payload = world.example.payload
    world.send()
    row = world.installation(payload["installation"]["id"])
    if world.example.action == "deleted":
        assert row is None
        return
    assert row is not None
    account = payload["installation"]["account"]
    assert (row.account_id, row.account_login) == (account["id"], account["login"])
    assert row.repository_selection == payload["installation"]["repository_selection"]
    if world.example.action == "created":
        assert (row.installed_by_id, row.installed_by_login) == (
            payload["sender"]["id"],
            payload["sender"]["login"],
        )
        expected = {(r["id"], r["full_name"]) for r in payload.get("repositories") or []}
        assert {(r.repository_id, r.full_name) for r in row.repositories} == expected
    assert (row.suspended_at is not None) is (world.example.action == "suspend")
    assert world.fake.seen == []


def repositories_recorded(world: World) -> None:
    payload = world.example.payload
    world.send()
    row = world.installation(payload["installation"]["id"])
    assert row is not None
    held = {r.repository_id for r in row.repositories}
    assert {r["id"] for r in payload["repositories_added"]} <= held
    assert not {r["id"] for r in payload["repositories_removed"]} & held
    assert row.repository_selection == payload["repository_selection"]
    assert world.fake.seen == []


def comment_read(world: World) -> None:
    """As sent, the comment holds no command: read, and left alone. With its body made
    `/hbench help`, the same delivery is answered in its thread."""
    payload = world.example.payload
    repo = world.repo()
    author = world.user(payload["comment"]["user"])
    number = payload["issue"]["number"]
    comment = world.fake.post_comment(
        repo, number, author, payload["comment"]["body"], id=payload["comment"]["id"]
    )
    world.send()
    assert world.fake.seen == []
    assert world.fake.replies_on(repo, number) == []

    world.send(comment={**payload["comment"], "body": "/hbench help"})
    [reply] = world.fake.replies_on(repo, number)
    assert reply.body.startswith(MARKER) and f"@{author.login}" in reply.body
    assert world.fake.reactions_on(comment) == ["eyes", "rocket"]


def registry_checked(world: World) -> None:
    """A pull request to the data repository changing its registry gets a check run on
    the head the payload names."""
    payload = world.example.payload
    repo = world.repo()
    head = payload["pull_request"]["head"]["sha"]
    registry = {f"registry/{path}": text for path, text in read_folder(DEFAULT_DIR).items()}
    world.fake.commit(repo, {"README.md": "# data\n", **registry}, commit_sha=head)
    changed = sorted(registry)[:1]
    author = world.user(payload["pull_request"]["user"])
    world.fake.open_pull(repo, author, head, changed, number=payload["number"])
    world.send()
    [run] = world.fake.check_runs
    assert (run.repo, run.name, run.head_sha, run.status) == (repo, CHECK_NAME, head, "completed")
    assert run.conclusion == "success", run.output


EFFECTS: dict[str, Callable[[World], None]] = {
    "installation": installation_recorded,
    "installation_repositories": repositories_recorded,
    "issue_comment": comment_read,
    "pull_request": registry_checked,
}


def test_a_delivery_a_behaviour_acts_on_is_handled(
    service_client: TestClient,
    fake: FakeGitHub,
    db: Session,
    acted_on: Example,
    caplog: pytest.LogCaptureFixture,
) -> None:
    effect = EFFECTS.get(acted_on.event)
    assert effect is not None, f"no check here of what the App does with {acted_on.event}"
    effect(World(fake, service_client, db, acted_on))
    no_trouble_logged(caplog)

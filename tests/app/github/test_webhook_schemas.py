"""The deliveries the tests send are shaped as GitHub's: every payload builder of the fake
GitHub (`tests/fakes/github/webhooks.py`), in each of its forms, checked against GitHub's
schema for its event and action (`@octokit/webhooks-schemas`, draft-07, with its formats).

The schemas forbid fields they don't name and require the ones GitHub always sends, so a
fixture can neither lose a field the service might come to read nor carry one GitHub
never sends. Every event and action a behaviour acts on must have a builder checked here.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft7Validator

from app.github.behaviours import BEHAVIOURS
from app.github.routing import Event
from tests.fakes.github import FakeGitHub
from tests.fakes.github import webhooks as builders
from tests.fakes.github.state import FakeComment, FakeInstallation, FakeRepo, FakeUser
from tests.fakes.github.webhooks import (
    installation_payload,
    installation_repositories_payload,
    issue_comment_payload,
    ping_payload,
    pull_request_payload,
)
from tests.support import corpora

from .conftest import SERVICE_URL

SCHEMAS = corpora.WEBHOOK_SCHEMAS


@cache
def definitions() -> dict[str, Any]:
    path = corpora.npm_package(SCHEMAS) / "schema.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return dict(schema["definitions"])


def schema_name(event: str, action: str | None) -> str:
    """The schema of an event's action (`issue_comment$created`), or of an event without
    actions (`ping$event`)."""
    return f"{event}${action or 'event'}"


@cache
def validator(name: str) -> Draft7Validator:
    if name not in definitions():
        pytest.fail(f"{SCHEMAS.name}@{SCHEMAS.version} has no schema {name}")
    schema = {"definitions": definitions(), "allOf": [{"$ref": f"#/definitions/{name}"}]}
    return Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)


def problems(event: str, payload: dict[str, Any]) -> list[str]:
    """Each way `payload` differs from GitHub's schema for it, as `path: message`."""
    action = payload.get("action")
    found = validator(schema_name(event, action)).iter_errors(payload)
    return sorted(f"{'/'.join(map(str, e.absolute_path)) or '.'}: {e.message}" for e in found)


@dataclass
class World:
    """An organisation and a person, each with the App installed, and what they hold."""

    fake: FakeGitHub
    org: FakeUser
    alice: FakeUser
    widgets: FakeRepo  # the organisation's, the App installed on it alone
    notes: FakeRepo  # alice's own, the App installed on all her repositories
    on_org: FakeInstallation
    on_alice: FakeInstallation

    def comment(self, repo: FakeRepo, body: str = "/hbench help") -> FakeComment:
        return self.fake.post_comment(repo, 7, self.alice, body)


@pytest.fixture
def world(fake: FakeGitHub) -> World:
    org = fake.add_user("octo-org", type="Organization")
    alice = fake.add_user("alice")
    widgets, notes = fake.add_repo(org, "widgets"), fake.add_repo(alice, "notes", private=True)
    fake.add_repo(org, "gadgets")
    fake.grant(widgets, alice, "write")
    on_org, on_alice = fake.install(org, [widgets]), fake.install(alice)
    return World(fake, org, alice, widgets, notes, on_org, on_alice)


def reacted_comment(world: World) -> tuple[str, dict[str, Any]]:
    comment = world.comment(world.widgets)
    comment.reactions += [("eyes", "hbench[bot]"), ("rocket", "hbench[bot]")]
    return "issue_comment", issue_comment_payload(world.fake, comment)


def our_reply(world: World) -> tuple[str, dict[str, Any]]:
    world.comment(world.widgets)
    reply = world.fake.reply_as_app(world.widgets, 7, "<!-- hbench:reply -->")
    return "issue_comment", issue_comment_payload(world.fake, reply)


def bot_comment(world: World) -> tuple[str, dict[str, Any]]:
    bot = world.fake.add_user("dependabot[bot]", type="Bot")
    comment = world.fake.post_comment(world.widgets, 7, bot, "/hbench help")
    return "issue_comment", issue_comment_payload(world.fake, comment)


def installation(action: str, *, on_org: bool = True) -> Case:
    def build(world: World) -> tuple[str, dict[str, Any]]:
        target = world.on_org if on_org else world.on_alice
        return "installation", installation_payload(world.fake, target, world.alice, action=action)

    return build


def repositories(*, added: bool) -> Case:
    def build(world: World) -> tuple[str, dict[str, Any]]:
        changed = {"added" if added else "removed": [world.fake.repo("octo-org", "gadgets")]}
        return "installation_repositories", installation_repositories_payload(
            world.fake, world.on_org, world.alice, **changed
        )

    return build


def pull_request(action: str) -> Case:
    def build(world: World) -> tuple[str, dict[str, Any]]:
        head = world.fake.commit(world.widgets, {"registry/prices.json": "{}"})
        pull = world.fake.open_pull(world.widgets, world.alice, head, ["registry/prices.json"])
        return "pull_request", pull_request_payload(world.fake, world.widgets, pull, action=action)

    return build


Case = Callable[[World], tuple[str, dict[str, Any]]]
CASES: dict[str, tuple[Callable[..., dict[str, Any]], Case]] = {
    "comment on a pull request": (
        issue_comment_payload,
        lambda w: ("issue_comment", issue_comment_payload(w.fake, w.comment(w.widgets))),
    ),
    "comment on an issue": (
        issue_comment_payload,
        lambda w: (
            "issue_comment",
            issue_comment_payload(w.fake, w.comment(w.notes), pull_request=False),
        ),
    ),
    "comment edited": (
        issue_comment_payload,
        lambda w: (
            "issue_comment",
            issue_comment_payload(w.fake, w.comment(w.widgets), action="edited"),
        ),
    ),
    "comment deleted": (
        issue_comment_payload,
        lambda w: (
            "issue_comment",
            issue_comment_payload(w.fake, w.comment(w.widgets), action="deleted"),
        ),
    ),
    "comment with reactions": (issue_comment_payload, reacted_comment),
    "comment by the App": (issue_comment_payload, our_reply),
    "comment by a bot": (issue_comment_payload, bot_comment),
    **{
        f"installation {action}": (installation_payload, installation(action))
        for action in ("created", "deleted", "suspend", "unsuspend", "new_permissions_accepted")
    },
    "installation on every repository of a person": (
        installation_payload,
        installation("created", on_org=False),
    ),
    "repositories added": (installation_repositories_payload, repositories(added=True)),
    "repositories removed": (installation_repositories_payload, repositories(added=False)),
    **{
        f"pull request {action}": (pull_request_payload, pull_request(action))
        for action in ("opened", "synchronize", "reopened")
    },
    "ping": (ping_payload, lambda w: ("ping", ping_payload(w.fake, SERVICE_URL))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_payload_the_fake_sends_is_shaped_as_githubs(world: World, case: str) -> None:
    event, payload = CASES[case][1](world)
    assert problems(event, payload) == []


def test_every_builder_of_the_fake_is_checked() -> None:
    built = {
        name
        for name, function in inspect.getmembers(builders, inspect.isfunction)
        if name.endswith("_payload") and function.__module__ == builders.__name__
    }
    assert built == {builder.__name__ for builder, _ in CASES.values()}


def test_every_action_a_behaviour_acts_on_is_checked(world: World) -> None:
    """The actions GitHub's schemas list for each event the App subscribes to, narrowed to
    those some behaviour handles: each must be a form checked above."""
    listed = [name.partition("$") for name in definitions()]
    acted = {
        f"{event}${action}"
        for event, dollar, action in listed
        if dollar and action != "event" and BEHAVIOURS.handlers_for(Event(event, action, "-", {}))
    }
    checked = set()
    for _, build in CASES.values():
        event, payload = build(world)
        checked.add(schema_name(event, payload.get("action")))
    assert acted, "no behaviour acts on any action GitHub's schemas list"
    assert acted <= checked


def test_the_schemas_refuse_a_payload_githubs_would_not_be(world: World) -> None:
    """The check has teeth: a missing field, a field GitHub never sends, a wrong type and
    a malformed time are each found."""
    _, payload = CASES["comment on a pull request"][1](world)
    changed = copy.deepcopy(payload)
    del changed["comment"]["user"]["login"]
    changed["repository"]["stars"] = 3
    changed["issue"]["number"] = "12"
    changed["comment"]["created_at"] = "yesterday"
    found = problems("issue_comment", changed)
    assert any(p.startswith("comment/user: 'login' is a required") for p in found), found
    assert any(p.startswith("repository: Additional properties") for p in found), found
    assert any(p.startswith("issue/number: '12' is not of type") for p in found), found
    assert any(p.startswith("comment/created_at: 'yesterday' is not a") for p in found), found

"""The registry pull-request check end to end: a signed `pull_request` delivery, the head's
registry files read from the fake GitHub's API, and the check run it shows there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.github.registry_checks import CHECK_NAME, MAX_FILES, is_registry_file
from app.settings import Settings
from registry.loader import DEFAULT_DIR, read_folder
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeCheckRun, FakeRepo, FakeUser
from tests.fakes.github.webhooks import deliver, delivery, pull_request_payload

from ..conftest import LOCAL

DATA_REPOSITORY = "hbench-org/data"


@pytest.fixture
def github_mode(github_mode: Settings) -> Settings:
    """GitHub mode, with `hbench-org/data` as the data repository."""
    return github_mode.model_copy(
        update={"data_repository": DATA_REPOSITORY, "writer_enabled": False}
    )


@dataclass
class World:
    fake: FakeGitHub
    client: TestClient
    data: FakeRepo
    author: FakeUser

    def registry(self) -> dict[str, str]:
        """The shipped registry, as the data repository's `registry/` folder holds it."""
        return {f"registry/{path}": text for path, text in read_folder(DEFAULT_DIR).items()}

    def pull(
        self,
        files: dict[str, str],
        changed: list[str],
        *,
        repo: FakeRepo | None = None,
        action: str = "opened",
    ) -> None:
        """Open a pull request whose head holds `files` and which changes `changed`."""
        target = repo or self.data
        head = self.fake.commit(target, {"README.md": "# data\n", **files})
        pull = self.fake.open_pull(target, self.author, head, changed)
        payload = pull_request_payload(self.fake, target, pull, action=action)
        answer = deliver(self.client, delivery(self.fake, "pull_request", payload))
        assert answer.status_code == 202, answer.text

    def check_run(self) -> FakeCheckRun:
        [run] = self.fake.check_runs
        assert run.name == CHECK_NAME and run.status == "completed"
        return run


@pytest.fixture
def world(fake: FakeGitHub, service: FastAPI) -> Iterator[World]:
    org = fake.add_user("hbench-org", type="Organization")
    data = fake.add_repo(org, "data")
    fake.install(org)
    with TestClient(service, **LOCAL) as client:
        yield World(fake, client, data, fake.add_user("mallory"))


@pytest.mark.parametrize("action", ["opened", "synchronize", "reopened"])
def test_a_valid_registry_change_passes(world: World, action: str) -> None:
    files = world.registry()
    board = json.loads(files["registry/boards/hbench-demo-quick.json"])
    board["title"] = board.get("title", "Demo") + " (renamed)"
    files["registry/boards/hbench-demo-quick.json"] = json.dumps(board)
    world.pull(files, ["registry/boards/hbench-demo-quick.json"], action=action)
    run = world.check_run()
    assert run.conclusion == "success"
    assert run.repo is world.data and run.head_sha in world.data.commits
    assert "no problem" in run.output["summary"]


def test_a_broken_registry_fails_listing_every_problem(world: World) -> None:
    files = world.registry()
    files["registry/models/broken.json"] = "{ not json"
    board = json.loads(files["registry/boards/hbench-demo.json"])
    board["model"] = "no-such-model"
    files["registry/boards/hbench-demo.json"] = json.dumps(board)
    del files["registry/benchmarks/hbench-demo.json"]
    world.pull(files, ["registry/models/broken.json", "registry/boards/hbench-demo.json"])
    run = world.check_run()
    assert run.conclusion == "failure"
    summary = run.output["summary"]
    for code in ("registry-json-invalid", "registry-unknown-model", "registry-unknown-benchmark"):
        assert f"`{code}`" in summary, summary
    assert run.output["title"].startswith("The registry has ")
    assert "models/broken.json" in summary


def test_a_pull_request_leaving_the_registry_alone_gets_no_check_run(world: World) -> None:
    world.pull({**world.registry(), "docs/notes.md": "notes"}, ["docs/notes.md"])
    assert world.fake.check_runs == []


def test_a_pull_request_to_another_repository_gets_no_check_run(world: World) -> None:
    other = world.fake.add_repo(world.data.owner, "website")
    world.pull({"registry/models/broken.json": "{"}, ["registry/models/broken.json"], repo=other)
    assert world.fake.check_runs == []
    asked = [seen.path for seen in world.fake.seen]
    assert not any("/pulls/" in path or "/git/" in path for path in asked)


def test_a_registry_too_large_to_read_fails_without_reading_it(world: World) -> None:
    files = {f"registry/models/m{n}.json": "{}" for n in range(MAX_FILES + 1)}
    world.pull(files, ["registry/models/m0.json"])
    run = world.check_run()
    assert run.conclusion == "failure" and "`registry-too-many-files`" in run.output["summary"]
    assert not any("/git/blobs/" in seen.path for seen in world.fake.seen)


@pytest.mark.parametrize(
    ("path", "read"),
    [
        ("registry/benchmarks/aime.json", True),
        ("registry/models/gpt-5.json", True),
        ("registry/boards/hbench-demo.json", True),
        ("registry/prices.json", True),
        ("registry/boards/nested/x.json", False),
        ("registry/notes.md", False),
        ("registry/tools/x.json", False),
        ("boards/hbench-demo/rows.json", False),
    ],
)
def test_the_check_reads_what_hbench_registry_check_reads(path: str, read: bool) -> None:
    assert is_registry_file(path) is read

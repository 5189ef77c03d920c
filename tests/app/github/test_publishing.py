"""`/hbench publish`, `withdraw` and `delete` acting for real: a signed `issue_comment`
delivery, the real uploaded job published (withdrawn, deleted) through the publishing
service, and the reply and reactions on the fake GitHub."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.auth.service import create_api_token
from app.db.models import Account, IssuedRun, Job, JobStatus, WebhookDelivery, utcnow
from app.registry import default_registry, get_registry
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeComment, FakeUser
from tests.fakes.github.webhooks import deliver, delivery, issue_comment_payload

from ..bench.conftest import issue_run, run_token, sealed, sealed_archive, upload
from ..bench.jobs import SealedJob
from ..conftest import LOCAL, bearer
from ..publish.conftest import kinds
from .conftest import SERVICE_URL
from .test_comments import Thread

__all__ = ["sealed", "sealed_archive"]

pytestmark = pytest.mark.harbor

JOB = "oracle-k2"  # the sealed job's name


@dataclass
class Bench:
    """alice's uploaded job, and a pull request on a repository where the App is installed."""

    thread: Thread
    db: Session
    alice: FakeUser
    job_id: uuid.UUID

    def job(self) -> Job:
        self.db.rollback()
        row = self.db.get(Job, self.job_id)
        assert row is not None
        return row

    def say(self, user: FakeUser, body: str) -> FakeComment:
        return self.thread.comment(user, body)


@pytest.fixture
def bench(
    fake: FakeGitHub, service: FastAPI, db: Session, sealed: SealedJob, sealed_archive: bytes
) -> Iterator[Bench]:
    alice = fake.add_user("alice")
    issued = issue_run(db, sealed.spec, login="alice", issued_at=utcnow() - timedelta(hours=1))
    account = db.scalars(select(Account).where(Account.login == "alice")).one()
    account.github_id = alice.id
    db.commit()
    owner = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(owner, "widgets")
    fake.install(owner)
    with TestClient(service, **LOCAL) as client:
        uploaded = upload(client, sealed_archive, **run_token(issued.token))
        assert uploaded.status_code == 201, uploaded.text
        yield Bench(Thread(fake, repo, 12, client), db, alice, uuid.UUID(uploaded.json()["id"]))


def test_the_owner_publishes_from_a_comment(bench: Bench) -> None:
    comment = bench.say(bench.alice, f"/hbench publish {JOB}")
    reply = bench.thread.reply()
    assert f"Published `{JOB}` to the board `hbench-demo`" in reply, reply
    assert "under the entry `alice/oracle-a1b2c3`" in reply
    assert f"{SERVICE_URL}/site/boards/hbench-demo/index.html" in reply
    assert bench.thread.fake.reactions_on(comment) == ["eyes", "rocket"]
    row = bench.job()
    assert (row.status, row.board, row.entry) == (
        JobStatus.PUBLISHED,
        "hbench-demo",
        "oracle-a1b2c3",
    )
    assert kinds(bench.db).count("publish_run") == 1


def test_withdraw_and_delete_from_comments(bench: Bench) -> None:
    bench.say(bench.alice, f"/hbench publish {bench.job_id}")
    withdrawn = bench.say(bench.alice, f"/hbench withdraw {JOB}")
    assert f"Withdrew `{JOB}` from the board `hbench-demo`, for good" in bench.thread.reply()
    assert bench.thread.fake.reactions_on(withdrawn) == ["eyes", "rocket"]
    assert bench.job().status is JobStatus.WITHDRAWN
    assert kinds(bench.db).count("withdraw_run") == 1

    deleted = bench.say(bench.alice, f"/hbench delete {JOB}")
    [reply] = bench.thread.replies()
    assert f"Deleted `{JOB}`: it has left Your bench" in reply.body and reply.edits == 2
    assert bench.thread.fake.reactions_on(deleted) == ["eyes", "rocket"]
    assert bench.job().status is JobStatus.DELETED


def test_a_published_job_deleted_from_a_comment_keeps_its_score(bench: Bench) -> None:
    bench.say(bench.alice, f"/hbench publish {JOB}")
    deleted = bench.say(bench.alice, f"/hbench delete {JOB}")
    assert "Its score stays on the board `hbench-demo`." in bench.thread.reply()
    assert bench.thread.fake.reactions_on(deleted) == ["eyes", "rocket"]
    assert (bench.job().status, bench.job().board) == (JobStatus.DELETED, "hbench-demo")
    assert kinds(bench.db)[-1] == "delete_run_files"


def test_a_counted_copy_is_refused_from_a_comment(bench: Bench, sealed_archive: bytes) -> None:
    """alice's issued run counted once uploaded: a copy of it she uploads with an API token
    stays private, and `/hbench publish` answers as the guide says."""
    account = bench.db.scalars(select(Account).where(Account.login == "alice")).one()
    _, token = create_api_token(bench.db, account, "uploads")
    client = bench.thread.client
    copy = upload(client, sealed_archive, **bearer(token))
    assert copy.status_code == 201 and copy.json()["counted_before"] is True, copy.text
    before = kinds(bench.db)

    refused = bench.say(bench.alice, f"/hbench publish {copy.json()['id']}")

    reply = bench.thread.reply()
    assert "was published before, and a job is published once" in reply, reply
    assert "(`bench-published-before`)" in reply
    assert bench.thread.fake.reactions_on(refused) == ["eyes", "confused"]
    bench.db.rollback()
    assert bench.db.get_one(Job, uuid.UUID(copy.json()["id"])).status is JobStatus.PRIVATE
    assert kinds(bench.db) == before


def run_by_workflow(bench: Bench) -> None:
    """Make alice's job one the thread's repository's workflow ran (by its OIDC claims)."""
    row = bench.job()
    run = bench.db.get(IssuedRun, row.issued_run_id)
    assert run is not None
    repo = bench.thread.repo
    run.provenance = {"oidc": {"repository": repo.full_name, "repository_id": repo.id}}
    bench.db.commit()


def test_a_commenter_without_permission_is_refused_and_nothing_changes(bench: Bench) -> None:
    run_by_workflow(bench)
    fake = bench.thread.fake
    reader = fake.add_user("carol")
    fake.grant(bench.thread.repo, reader, "read")
    comment = bench.say(reader, f"/hbench publish {JOB}")
    reply = bench.thread.reply()
    assert "(`command-not-allowed`)" in reply
    assert "takes write or admin permission on octo-org/widgets" in reply
    assert fake.reactions_on(comment) == ["eyes", "confused"]
    assert bench.job().status is JobStatus.PRIVATE and kinds(bench.db) == []


def test_a_writer_of_the_workflows_repository_publishes_as_the_jobs_owner(bench: Bench) -> None:
    run_by_workflow(bench)
    fake = bench.thread.fake
    writer = fake.add_user("dave")
    fake.grant(bench.thread.repo, writer, "write")
    bench.say(writer, f"/hbench publish {JOB}")
    assert "under the entry `alice/oracle-a1b2c3`" in bench.thread.reply()
    assert bench.job().status is JobStatus.PUBLISHED


def test_a_redelivered_command_acts_once(bench: Bench) -> None:
    thread = bench.thread
    written = thread.fake.post_comment(
        thread.repo, thread.number, bench.alice, f"/hbench publish {JOB}"
    )
    sent = delivery(thread.fake, "issue_comment", issue_comment_payload(thread.fake, written))
    assert deliver(thread.client, sent).status_code == 202
    first = bench.job().published_at
    # GitHub redelivers: the delivery id was seen, so nothing is done at all.
    again = deliver(thread.client, sent)
    assert (again.status_code, again.json()["status"]) == (200, "duplicate")
    # Its handling failed after publishing (the reply could not be posted, say), so the
    # delivery id was forgotten: the redelivery answers as the first time, acting no more.
    bench.db.execute(delete(WebhookDelivery).where(WebhookDelivery.id == sent.delivery_id))
    bench.db.commit()
    assert deliver(thread.client, sent).status_code == 202
    [reply] = thread.replies()
    assert f"Published `{JOB}` to the board `hbench-demo`" in reply.body
    assert "already" not in reply.body.lower()
    assert bench.job().published_at == first
    assert kinds(bench.db).count("publish_run") == 1
    assert thread.fake.reactions_on(written) == ["eyes", "rocket"]


def test_a_job_fitting_several_boards_is_published_to_the_one_named(
    fake: FakeGitHub, service: FastAPI, db: Session, sealed_archive: bytes
) -> None:
    registry = default_registry()
    twin = registry.boards["hbench-demo"].model_copy(update={"slug": "hbench-demo-twin"})
    boards = {**registry.boards, "hbench-demo-twin": twin}
    service.dependency_overrides[get_registry] = lambda: dataclasses.replace(
        registry, boards=boards
    )
    alice = fake.add_user("alice")
    account = Account(login="alice", github_id=alice.id)
    db.add(account)
    db.commit()
    _, token = create_api_token(db, account, "uploads")
    owner = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(owner, "widgets")
    fake.install(owner)
    with TestClient(service, **LOCAL) as client:
        assert upload(client, sealed_archive, **bearer(token)).status_code == 201
        thread = Thread(fake, repo, 3, client)
        asked = thread.comment(alice, f"/hbench publish {JOB}")
        reply = thread.reply()
        assert "fits 2 boards (`hbench-demo`, `hbench-demo-twin`)" in reply, reply
        assert f"`/hbench publish {JOB} --board <board>`" in reply
        assert "(`publish-board-choice`)" in reply
        assert fake.reactions_on(asked) == ["eyes", "confused"]
        thread.comment(alice, f"/hbench publish {JOB} --board hbench-demo-twin")
        assert f"Published `{JOB}` to the board `hbench-demo-twin`" in thread.reply()

"""Comment commands end to end: a signed `issue_comment` delivery, the service's reply on
the fake GitHub (one per thread, edited in place), and its reactions."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.db.models import Account, IssuedRun, Job, JobStatus, utcnow
from app.github.comments import MARKER
from app.github.jobs import ActionRequest, get_job_actions
from hbench.errors import HbenchError
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeComment, FakeRepo, FakeUser
from tests.fakes.github.webhooks import deliver, delivery, issue_comment_payload

from ..conftest import LOCAL


@dataclass
class Thread:
    """A pull request on a repository where the App is installed."""

    fake: FakeGitHub
    repo: FakeRepo
    number: int
    client: TestClient

    def comment(self, user: FakeUser, body: str, *, action: str = "created") -> FakeComment:
        """`user` writes `body`; GitHub tells the service."""
        written = self.fake.post_comment(self.repo, self.number, user, body)
        payload = issue_comment_payload(self.fake, written, action=action)
        answer = deliver(self.client, delivery(self.fake, "issue_comment", payload))
        # Only new comments are acted on; an edit is answered 200 `ignored`.
        assert answer.status_code == (202 if action == "created" else 200), answer.text
        return written

    def replies(self) -> list[FakeComment]:
        return self.fake.replies_on(self.repo, self.number)

    def reply(self) -> str:
        [reply] = self.replies()
        return reply.body


@pytest.fixture
def alice(fake: FakeGitHub) -> FakeUser:
    return fake.add_user("alice")


@pytest.fixture
def thread(fake: FakeGitHub, service_client: TestClient) -> Thread:
    owner = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(owner, "widgets")
    fake.install(owner)
    return Thread(fake, repo, 42, service_client)


def test_help_is_answered_in_a_marked_reply_with_reactions(thread: Thread, alice: FakeUser) -> None:
    comment = thread.comment(alice, "Could you list the commands?\n/hbench help")
    body = thread.reply()
    assert body.startswith(MARKER)
    assert "@alice" in body
    for usage in ("/hbench publish <job> [--board B]", "/hbench status [<job>]"):
        assert usage in body
    assert "/hbench publish <job> [--board B]`: Publish" in body
    assert thread.fake.reactions_on(comment) == ["eyes", "rocket"]


def test_a_second_command_edits_the_reply_instead_of_adding_one(
    thread: Thread, alice: FakeUser
) -> None:
    thread.comment(alice, "/hbench help")
    second = thread.comment(alice, "/hbench status")
    [reply] = thread.replies()
    assert reply.edits == 1
    assert "/hbench status" in reply.body and "has no jobs on hbench yet" in reply.body
    assert thread.fake.reactions_on(second) == ["eyes", "rocket"]


def test_edits_bots_and_our_own_comments_are_ignored(thread: Thread, alice: FakeUser) -> None:
    edited = thread.comment(alice, "/hbench help", action="edited")
    bot = thread.comment(thread.fake.add_user("dependabot[bot]", type="Bot"), "/hbench help")
    ours = thread.fake.reply_as_app(thread.repo, thread.number, "/hbench help")
    payload = issue_comment_payload(thread.fake, ours)
    deliver(thread.client, delivery(thread.fake, "issue_comment", payload))
    assert thread.replies() == [ours]  # nothing but the App's own comment
    assert edited.reactions == bot.reactions == ours.reactions == []


def test_a_comment_without_commands_gets_no_answer(thread: Thread, alice: FakeUser) -> None:
    comment = thread.comment(alice, "Looks good to me. We could run /hbench later.")
    assert thread.replies() == []
    assert comment.reactions == []


def test_malformed_commands_are_answered_with_their_code(thread: Thread, alice: FakeUser) -> None:
    comment = thread.comment(alice, "/hbench publsh my-job\n/hbench status ../x")
    body = thread.reply()
    assert "(`command-unknown`)" in body and "(`command-job-invalid`)" in body
    assert thread.fake.reactions_on(comment) == ["eyes", "confused"]


def test_without_job_actions_publishing_commands_are_unavailable(
    service: FastAPI, thread: Thread, alice: FakeUser
) -> None:
    service.dependency_overrides[get_job_actions] = lambda: None
    comment = thread.comment(alice, "/hbench publish my-job\n/hbench help")
    body = thread.reply()
    assert "does not take `/hbench publish` yet" in body and "(`command-unavailable`)" in body
    assert "`/hbench withdraw <job>`: Withdraw a published job, for good. *(not available" in body
    assert thread.fake.reactions_on(comment) == ["eyes", "confused"]


# -- jobs ----------------------------------------------------------------------------------


def add_account(db: Session, user: FakeUser) -> Account:
    account = Account(login=user.login, github_id=user.id)
    db.add(account)
    db.commit()
    return account


def add_job(
    db: Session, owner: Account, name: str, *, workflow_repo: FakeRepo | None = None
) -> Job:
    run = None
    if workflow_repo is not None:
        now = utcnow()
        run = IssuedRun(
            account_id=owner.id,
            board="hbench-demo",
            entry="oracle-a3f9c1",
            spec={},
            spec_digest="sha256:" + "0" * 64,
            token_hash=uuid.uuid4().hex * 2,
            issued_at=now,
            expires_at=now + timedelta(hours=48),
            provenance={"repository": workflow_repo.full_name, "repository_id": workflow_repo.id},
        )
        db.add(run)
        db.flush()
    job = Job(
        owner_id=owner.id,
        job_id=uuid.uuid4(),
        job_name=name,
        status=JobStatus.PRIVATE,
        summary={},
        checks=[{"rule": "manifest", "status": "passed"}, {"rule": "spec", "status": "failed"}],
        redactions={},
        issued_run_id=run.id if run else None,
        board="hbench-demo",
    )
    db.add(job)
    db.commit()
    return job


def test_status_lists_the_commenters_jobs(
    thread: Thread, alice: FakeUser, db: Session, fake: FakeGitHub
) -> None:
    mine = add_account(db, alice)
    add_job(db, mine, "first-job")
    add_job(db, add_account(db, fake.add_user("bob")), "bobs-job")
    thread.comment(alice, "/hbench status")
    body = thread.reply()
    assert "`first-job`" in body and "**private** on `hbench-demo`" in body
    assert "bobs-job" not in body


def test_status_of_one_job_shows_its_checks(thread: Thread, alice: FakeUser, db: Session) -> None:
    job = add_job(db, add_account(db, alice), "first-job")
    thread.comment(alice, f"/hbench status {job.id}")
    assert "checks: 1 of 2 passed" in thread.reply()


def test_another_persons_job_is_not_found(
    thread: Thread, alice: FakeUser, db: Session, fake: FakeGitHub
) -> None:
    add_job(db, add_account(db, fake.add_user("bob")), "bobs-job")
    comment = thread.comment(alice, "/hbench status bobs-job")
    assert "(`command-job-not-found`)" in thread.reply()
    assert thread.fake.reactions_on(comment) == ["eyes", "confused"]


@dataclass
class RecordingActions:
    """Job actions that record what they were asked, standing in for publishing."""

    asked: list[tuple[str, ActionRequest]] = field(default_factory=list)

    async def publish(self, request: ActionRequest) -> str:
        self.asked.append(("publish", request))
        if request.board == "full-board":
            raise HbenchError("run-board-unknown", "no board full-board")
        return f"published `{request.job.name}`"

    async def withdraw(self, request: ActionRequest) -> str:
        self.asked.append(("withdraw", request))
        return f"withdrew `{request.job.name}`"

    async def delete(self, request: ActionRequest) -> str:
        self.asked.append(("delete", request))
        return f"deleted `{request.job.name}`"


@pytest.fixture
def actions(service: FastAPI) -> RecordingActions:
    recorder = RecordingActions()
    service.dependency_overrides[get_job_actions] = lambda: recorder
    return recorder


@pytest.fixture
def acting_thread(
    actions: RecordingActions, service: FastAPI, fake: FakeGitHub
) -> Iterator[Thread]:
    owner = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(owner, "widgets")
    fake.install(owner)
    with TestClient(service, **LOCAL) as client:
        yield Thread(fake, repo, 7, client)


def test_the_owner_publishes_from_a_comment(
    acting_thread: Thread, actions: RecordingActions, alice: FakeUser, db: Session
) -> None:
    job = add_job(db, add_account(db, alice), "my-job")
    comment = acting_thread.comment(alice, "/hbench publish my-job --board hbench-demo")
    [(what, asked)] = actions.asked
    assert what == "publish" and asked.job.id == job.id and asked.board == "hbench-demo"
    assert asked.actor.id == alice.id and asked.repository.full_name == "octo-org/widgets"
    assert "published `my-job`" in acting_thread.reply()
    assert acting_thread.fake.reactions_on(comment) == ["eyes", "rocket"]


def test_a_refusal_from_publishing_is_shown_with_its_code(
    acting_thread: Thread, actions: RecordingActions, alice: FakeUser, db: Session
) -> None:
    add_job(db, add_account(db, alice), "my-job")
    acting_thread.comment(alice, "/hbench publish my-job --board full-board")
    assert "no board full-board (`run-board-unknown`)" in acting_thread.reply()


@pytest.mark.parametrize(("role", "allowed"), [("write", True), ("admin", True), ("read", False)])
def test_a_workflow_job_may_be_acted_on_by_writers_of_its_repository(
    acting_thread: Thread,
    actions: RecordingActions,
    alice: FakeUser,
    db: Session,
    *,
    role: str,
    allowed: bool,
) -> None:
    fake = acting_thread.fake
    owner = add_account(db, fake.add_user("carol"))
    add_job(db, owner, "ci-job", workflow_repo=acting_thread.repo)
    fake.grant(acting_thread.repo, alice, role)
    comment = acting_thread.comment(alice, "/hbench withdraw ci-job")
    if allowed:
        assert [what for what, _ in actions.asked] == ["withdraw"]
        assert fake.reactions_on(comment) == ["eyes", "rocket"]
    else:
        assert actions.asked == []
        assert "(`command-not-allowed`)" in acting_thread.reply()
        assert fake.reactions_on(comment) == ["eyes", "confused"]


def test_a_workflow_job_is_not_found_from_another_repository(
    acting_thread: Thread, actions: RecordingActions, alice: FakeUser, db: Session
) -> None:
    fake = acting_thread.fake
    other = fake.add_repo(fake.add_user("elsewhere"), "repo")
    add_job(db, add_account(db, fake.add_user("carol")), "ci-job", workflow_repo=other)
    acting_thread.comment(alice, "/hbench delete ci-job")
    assert actions.asked == []
    assert "(`command-job-not-found`)" in acting_thread.reply()


def test_two_jobs_of_one_name_are_named_by_id(
    acting_thread: Thread, actions: RecordingActions, alice: FakeUser, db: Session
) -> None:
    account = add_account(db, alice)
    add_job(db, account, "again")
    second = add_job(db, account, "again")
    acting_thread.comment(alice, "/hbench delete again")
    assert actions.asked == []
    assert "(`command-job-ambiguous`)" in acting_thread.reply()
    acting_thread.comment(alice, f"/hbench delete {second.id}")
    assert [(what, asked.job.id) for what, asked in actions.asked] == [("delete", second.id)]

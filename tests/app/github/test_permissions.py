"""Who may act on a job, asked of the fake GitHub's collaborator-permission API."""

from __future__ import annotations

import uuid

import pytest

from app.db.models import utcnow
from app.github.client import GitHubKitClient
from app.github.jobs import JobFacts, workflow_claims
from app.github.models import GitHubUser, Repo
from app.github.permissions import authorize_job_action, has_write_access
from hbench.errors import HbenchError
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeRepo

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(fake: FakeGitHub) -> FakeRepo:
    owner = fake.add_user("octo-org", type="Organization")
    repo = fake.add_repo(owner, "widgets", private=True)
    fake.install(owner)
    return repo


def job(owner_github_id: int | None, workflow_repository_id: int | None = None) -> JobFacts:
    return JobFacts(
        id=uuid.uuid4(),
        name="ci-job",
        status="private",
        board=None,
        entry=None,
        uploaded_at=utcnow(),
        owner_github_id=owner_github_id,
        workflow_repository_id=workflow_repository_id,
        workflow_repository=None,
        checks_passed=0,
        checks_total=0,
    )


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        ("admin", True),
        ("maintain", True),
        ("write", True),
        ("triage", False),
        ("read", False),
        ("none", False),
    ],
)
async def test_write_access_is_write_or_admin(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo, role: str, allowed: bool
) -> None:
    alice = fake.add_user("alice")
    fake.grant(repo, alice, role)
    actor = GitHubUser(alice.id, "alice")
    assert await has_write_access(github_client, Repo.parse(repo.full_name), actor) is allowed


async def test_strangers_to_a_private_repository_have_no_access(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    passer_by = fake.add_user("passer-by")
    actor = GitHubUser(passer_by.id, "passer-by")
    assert not await has_write_access(github_client, Repo.parse(repo.full_name), actor)


async def test_the_owner_may_act_without_asking_github(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    alice = fake.add_user("alice")
    actor = GitHubUser(alice.id, "alice")
    reason = await authorize_job_action(
        github_client, job(alice.id), actor, Repo.parse(repo.full_name), repo.id
    )
    assert reason == "you own this job"
    assert fake.seen == []


@pytest.mark.parametrize(("role", "allowed"), [("write", True), ("admin", True), ("read", False)])
async def test_writers_of_the_workflows_repository_may_act(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo, role: str, allowed: bool
) -> None:
    alice = fake.add_user("alice")
    fake.grant(repo, alice, role)
    actor = GitHubUser(alice.id, "alice")
    workflow_job = job(owner_github_id=999, workflow_repository_id=repo.id)
    where = Repo.parse(repo.full_name)
    if allowed:
        reason = await authorize_job_action(github_client, workflow_job, actor, where, repo.id)
        assert "may write to octo-org/widgets" in reason
    else:
        with pytest.raises(HbenchError) as refused:
            await authorize_job_action(github_client, workflow_job, actor, where, repo.id)
        assert refused.value.code == "command-not-allowed"


async def test_a_login_taken_by_a_writer_after_its_holder_renamed_grants_nothing(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    alice = fake.add_user("alice")  # comments as alice, with no access to the repository
    commenter = GitHubUser(alice.id, "alice")
    alice.login = "alice-renamed"
    bob = fake.add_user("alice")  # a writer takes the login before the check
    fake.grant(repo, bob, "admin")
    where = Repo.parse(repo.full_name)
    assert not await has_write_access(github_client, where, commenter)
    workflow_job = job(owner_github_id=999, workflow_repository_id=repo.id)
    with pytest.raises(HbenchError) as refused:
        await authorize_job_action(github_client, workflow_job, commenter, where, repo.id)
    assert refused.value.code == "command-not-allowed"
    assert await has_write_access(github_client, where, GitHubUser(bob.id, "alice"))


async def test_writers_of_another_repository_may_not(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    alice = fake.add_user("alice")
    fake.grant(repo, alice, "admin")
    other_job = job(owner_github_id=999, workflow_repository_id=repo.id + 1)
    with pytest.raises(HbenchError) as refused:
        await authorize_job_action(
            github_client,
            other_job,
            GitHubUser(alice.id, "alice"),
            Repo.parse(repo.full_name),
            repo.id,
        )
    assert refused.value.code == "command-not-allowed"
    assert fake.seen == []  # refused without asking GitHub


def test_a_workflow_run_is_known_by_its_recorded_claims() -> None:
    claims = {"repository": "octo-org/widgets", "repository_id": 74, "sha": "a" * 40}
    assert workflow_claims(claims)["repository_id"] == 74
    assert workflow_claims({"oidc": claims, "hardware": {"cpus": 4}})["repository_id"] == 74
    assert workflow_claims({"hardware": {"cpus": 4}}) == {}
    assert workflow_claims(None) == {}

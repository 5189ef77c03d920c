"""The githubkit client, through its real HTTP path into the fake GitHub: the App's JWT,
installation tokens, permissions, comments, reactions, check runs and the OAuth code."""

from __future__ import annotations

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from app.github.client import GitHubKitClient
from app.github.models import CheckRun, Repo
from hbench.errors import HbenchError
from tests.fakes.github import FakeGitHub
from tests.fakes.github.state import FakeRepo, pem

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(fake: FakeGitHub) -> FakeRepo:
    owner = fake.add_user("octo-org", type="Organization")
    widgets = fake.add_repo(owner, "widgets")
    fake.install(owner)
    return widgets


def ref(repo: FakeRepo) -> Repo:
    return Repo.parse(repo.full_name)


async def test_the_installation_is_found_as_the_app(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    installation = await github_client.repo_installation(ref(repo))
    assert installation is not None
    assert installation.account.login == "octo-org"
    assert installation.account.id == repo.owner.id
    assert [(s.path, s.auth) for s in fake.seen] == [
        (f"/api/v3/repos/{repo.full_name}/installation", "jwt")
    ]


async def test_a_repository_without_the_app_has_no_installation(
    github_client: GitHubKitClient, fake: FakeGitHub
) -> None:
    elsewhere = fake.add_repo(fake.add_user("someone"), "thing")
    assert await github_client.repo_installation(ref(elsewhere)) is None
    with pytest.raises(HbenchError) as refused:
        await github_client.collaborator_permission(ref(elsewhere), "someone")
    assert refused.value.code == "github-not-installed"


@pytest.mark.parametrize(
    ("role", "permission"),
    [
        ("admin", "admin"),
        ("maintain", "write"),
        ("write", "write"),
        ("triage", "read"),
        ("read", "read"),
        ("none", "none"),
    ],
)
async def test_permissions_are_asked_of_github(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo, role: str, permission: str
) -> None:
    alice = fake.add_user("alice")
    fake.grant(repo, alice, role)
    assert await github_client.collaborator_permission(ref(repo), "alice") == permission


async def test_strangers_and_unknown_logins(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    fake.add_user("passer-by")
    # A public repository: everyone may read it.
    assert await github_client.collaborator_permission(ref(repo), "passer-by") == "read"
    assert await github_client.collaborator_permission(ref(repo), "no-such-user") == "none"


async def test_one_installation_token_serves_many_calls(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    fake.add_user("alice")
    for _ in range(3):
        await github_client.collaborator_permission(ref(repo), "alice")
    minted = [s for s in fake.seen if s.path.endswith("/access_tokens")]
    assert len(minted) == 1 and minted[0].auth == "jwt" and minted[0].status == 201
    calls = [s for s in fake.seen if s.path.endswith("/permission")]
    assert {s.auth for s in calls} == {"installation"} and len(calls) == 3


async def test_comments_are_made_found_by_marker_and_edited(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    alice = fake.add_user("alice")
    fake.post_comment(repo, 7, alice, "<!-- hbench:reply --> planted by a person")
    repo_ref = ref(repo)
    assert await github_client.find_marked_comment(repo_ref, 7, "<!-- hbench:reply -->") is None

    made = await github_client.create_comment(repo_ref, 7, "<!-- hbench:reply -->\nfirst")
    assert made.app_id == fake.app.id and made.author.type == "Bot"
    found = await github_client.find_marked_comment(repo_ref, 7, "<!-- hbench:reply -->")
    assert found is not None and found.id == made.id

    edited = await github_client.edit_comment(repo_ref, made.id, "<!-- hbench:reply -->\nsecond")
    assert edited.body.endswith("second")
    assert fake.comments[made.id].edits == 1


async def test_our_comment_is_found_past_the_first_page(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    alice = fake.add_user("alice")
    for number in range(150):
        fake.post_comment(repo, 3, alice, f"comment {number}")
    ours = fake.reply_as_app(repo, 3, "<!-- hbench:reply -->\nhello")
    found = await github_client.find_marked_comment(ref(repo), 3, "<!-- hbench:reply -->")
    assert found is not None and found.id == ours.id


async def test_reactions_are_added_once(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    comment = fake.post_comment(repo, 1, fake.add_user("alice"), "/hbench help")
    await github_client.react(ref(repo), comment.id, "eyes")
    await github_client.react(ref(repo), comment.id, "eyes")
    await github_client.react(ref(repo), comment.id, "rocket")
    assert fake.reactions_on(comment) == ["eyes", "rocket"]


async def test_a_check_run_is_shown_on_a_commit(
    github_client: GitHubKitClient, fake: FakeGitHub, repo: FakeRepo
) -> None:
    check = CheckRun(
        name="hbench registry check",
        head_sha="b" * 40,
        conclusion="failure",
        title="1 problem",
        summary="registry/benchmarks/x.json: unknown task set (registry-unknown-task-set)",
    )
    run_id = await github_client.create_check_run(ref(repo), check)
    [run] = fake.check_runs
    assert run.id == run_id
    assert (run.name, run.head_sha, run.status, run.conclusion) == (
        "hbench registry check",
        "b" * 40,
        "completed",
        "failure",
    )
    assert run.output["title"] == "1 problem"


async def test_a_jwt_signed_with_another_key_is_refused(
    fake: FakeGitHub,
    transport: httpx.ASGITransport,
    repo: FakeRepo,
    rsa_keys: list[RSAPrivateKey],
) -> None:
    client = GitHubKitClient(
        base_url=f"{fake.url}/api/v3",
        app_id=fake.app.id,
        private_key=pem(rsa_keys[1]),  # not the App's key
        transport=transport,
        auto_retry=False,
    )
    with pytest.raises(HbenchError) as refused:
        await client.repo_installation(ref(repo))
    assert refused.value.code == "github-request-failed"
    assert "401" in refused.value.detail


async def test_an_oauth_code_is_exchanged_for_the_user(
    github_client: GitHubKitClient, fake: FakeGitHub, transport: httpx.ASGITransport
) -> None:
    alice = fake.add_user("alice")
    fake.signing_in = alice
    redirect = "http://127.0.0.1:8000/auth/github/callback"
    async with httpx.AsyncClient(transport=transport, base_url=fake.url) as web:
        answer = await web.get(
            "/login/oauth/authorize",
            params={"client_id": fake.app.client_id, "redirect_uri": redirect, "state": "s"},
        )
    code = httpx.URL(answer.headers["location"]).params["code"]
    user = await github_client.user_from_oauth_code(code, redirect)
    assert (user.id, user.login) == (alice.id, "alice")
    with pytest.raises(HbenchError) as refused:  # a code works once
        await github_client.user_from_oauth_code(code, redirect)
    assert refused.value.code == "oauth-exchange-failed"


async def test_an_unconfigured_client_says_what_it_lacks() -> None:
    client = GitHubKitClient(base_url="https://api.github.com")
    with pytest.raises(HbenchError) as refused:
        await client.repo_installation(Repo("octo-org", "widgets"))
    assert refused.value.code == "github-not-configured"
    with pytest.raises(HbenchError) as refused:
        await client.user_from_oauth_code("code", "https://hbench.example/cb")
    assert refused.value.code == "github-not-configured"

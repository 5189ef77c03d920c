"""GitHub Actions OIDC tokens, verified against the fake issuer's published keys: what is
accepted, each refusal with its code, keys fetched again for an unknown `kid` (not too
often), and each token's `jti` used once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.claims import ActionsClaims, is_trusted, trusted_workflows
from app.auth.jti import consume_jti
from app.auth.jwks import HttpJwksSource, JwksCache
from app.auth.oidc import OidcVerifier
from app.db.models import UsedOidcToken
from hbench.errors import HbenchError
from tests.fakes.github import REMOVE, FakeGitHub

from .conftest import SERVICE_URL

pytestmark = pytest.mark.anyio


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def keys(fake: FakeGitHub, transport: httpx.ASGITransport, clock: Clock) -> JwksCache:
    return JwksCache(HttpJwksSource(fake.url, transport), monotonic=clock)


@pytest.fixture
def verifier(fake: FakeGitHub, keys: JwksCache) -> OidcVerifier:
    return OidcVerifier(issuer=fake.url, audience=SERVICE_URL, keys=keys)


def now() -> int:
    return int(datetime.now(UTC).timestamp())


async def refusal(verifier: OidcVerifier, token: str) -> HbenchError:
    with pytest.raises(HbenchError) as refused:
        await verifier.verify(token)
    return refused.value


def used(db: Session) -> list[str]:
    db.expire_all()
    return list(db.scalars(select(UsedOidcToken.jti)))


async def test_a_token_from_a_workflow_is_accepted_with_its_claims(
    verifier: OidcVerifier, fake: FakeGitHub
) -> None:
    claims = await verifier.verify(fake.oidc.mint(SERVICE_URL))
    assert isinstance(claims, ActionsClaims)
    assert (claims.repository, claims.repository_id) == ("octo-org/octo-repo", 74)
    assert (claims.repository_owner, claims.repository_owner_id) == ("octo-org", 65)
    assert (claims.run_id, claims.run_attempt, claims.actor_id) == (1234567890, 1, 583231)
    provenance = claims.provenance()
    assert provenance["job_workflow_ref"] == (
        "octo-org/octo-repo/.github/workflows/hbench.yml@refs/heads/main"
    )
    assert provenance["sha"] == "a" * 40
    assert provenance["runner_environment"] == "github-hosted"
    assert provenance["issuer"] == fake.url


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"exp": now() - 120, "iat": now() - 420, "nbf": now() - 420}, "oidc-token-expired"),
        ({"aud": "https://another.example"}, "oidc-audience-mismatch"),
        ({"aud": [SERVICE_URL, "https://another.example"]}, "oidc-audience-mismatch"),
        ({"aud": [SERVICE_URL]}, "oidc-audience-mismatch"),
        ({"iss": "https://token.actions.example"}, "oidc-issuer-mismatch"),
        ({"iat": now() + 600, "nbf": now() + 600}, "oidc-token-not-yet-valid"),
        ({"repository_id": REMOVE}, "oidc-claims-invalid"),
        ({"jti": REMOVE}, "oidc-claims-invalid"),
        ({"sha": "not-a-sha"}, "oidc-claims-invalid"),
        ({"exp": REMOVE}, "oidc-claims-invalid"),
        ({"sub": "repo:someone/else:ref:refs/heads/main"}, "oidc-claims-invalid"),
        (
            {"workflow_ref": "evil/repo/.github/workflows/x.yml@refs/heads/main"},
            "oidc-claims-invalid",
        ),
    ],
)
async def test_a_bad_token_is_refused_with_its_code_and_nothing_is_recorded(
    verifier: OidcVerifier, fake: FakeGitHub, db: Session, changes: dict[str, Any], code: str
) -> None:
    error = await refusal(verifier, fake.oidc.mint(SERVICE_URL, **changes))
    assert error.code == code
    assert error.detail.endswith(f"({code})")
    assert used(db) == []


async def test_expiry_allows_a_little_leeway(verifier: OidcVerifier, fake: FakeGitHub) -> None:
    token = fake.oidc.mint(SERVICE_URL, exp=now() - 10, iat=now() - 310, nbf=now() - 310)
    assert (await verifier.verify(token)).repository == "octo-org/octo-repo"


async def test_every_missing_claim_is_listed(verifier: OidcVerifier, fake: FakeGitHub) -> None:
    token = fake.oidc.mint(SERVICE_URL, repository_id=REMOVE, run_id=REMOVE, actor="")
    error = await refusal(verifier, token)
    assert {p.path for p in error.problems} == {
        "claims.repository_id",
        "claims.run_id",
        "claims.actor",
    }


async def test_a_wrong_audience_and_issuer_are_both_reported(
    verifier: OidcVerifier, fake: FakeGitHub
) -> None:
    token = fake.oidc.mint("https://another.example", iss="https://elsewhere.example")
    error = await refusal(verifier, token)
    assert [p.code for p in error.problems] == ["oidc-issuer-mismatch", "oidc-audience-mismatch"]


async def test_a_forged_signature_is_refused(
    verifier: OidcVerifier, fake: FakeGitHub, rsa_keys: list[RSAPrivateKey]
) -> None:
    # Signed by a key the issuer does not hold, naming the issuer's key id.
    claims = fake.oidc.claims(SERVICE_URL)
    forged = jwt.encode(claims, rsa_keys[0], "RS256", headers={"kid": fake.oidc.current.kid})
    assert (await refusal(verifier, forged)).code == "oidc-signature-invalid"
    # A real token with one claim changed.
    header, _, signature = fake.oidc.mint(SERVICE_URL).split(".")
    altered = jwt.encode({**claims, "repository": "octo-org/other"}, "k" * 32, "HS256")
    tampered = ".".join([header, altered.split(".")[1], signature])
    assert (await refusal(verifier, tampered)).code == "oidc-signature-invalid"


@pytest.mark.parametrize(
    "token",
    [
        "not-a-jwt",
        jwt.encode({"iss": "x"}, "a-shared-secret-of-32-bytes-long", "HS256", headers={"kid": "k"}),
        jwt.encode({"iss": "x"}, None, "none"),
    ],
)
async def test_tokens_that_are_not_rs256_jwts_are_refused(
    verifier: OidcVerifier, token: str
) -> None:
    assert (await refusal(verifier, token)).code == "oidc-token-invalid"


async def test_an_unknown_kid_fetches_the_keys_again_but_not_too_often(
    verifier: OidcVerifier, fake: FakeGitHub, clock: Clock
) -> None:
    await verifier.verify(fake.oidc.mint(SERVICE_URL))
    assert fake.oidc.jwks_fetches == 1
    await verifier.verify(fake.oidc.mint(SERVICE_URL))
    assert fake.oidc.jwks_fetches == 1  # cached by kid

    fake.oidc.rotate()
    rotated = fake.oidc.mint(SERVICE_URL)
    clock.now += 10  # within the cooldown: no new fetch
    assert (await refusal(verifier, rotated)).code == "oidc-key-unknown"
    assert fake.oidc.jwks_fetches == 1
    clock.now += 60
    assert (await verifier.verify(rotated)).jti
    assert fake.oidc.jwks_fetches == 2


async def test_a_key_the_issuer_does_not_publish_stays_unknown(
    verifier: OidcVerifier, fake: FakeGitHub, clock: Clock
) -> None:
    await verifier.verify(fake.oidc.mint(SERVICE_URL))
    hidden = fake.oidc.rotate(publish=False)
    clock.now += 61
    assert (await refusal(verifier, fake.oidc.mint(SERVICE_URL, key=hidden))).code == (
        "oidc-key-unknown"
    )
    assert fake.oidc.jwks_fetches == 2


class FailingSource:
    """An issuer that answered once, then failed."""

    def __init__(self, first: HttpJwksSource) -> None:
        self.first: HttpJwksSource | None = first

    async def fetch_jwks(self) -> dict[str, Any]:
        if self.first is None:
            raise httpx.ConnectError("the issuer is down")
        source, self.first = self.first, None
        return await source.fetch_jwks()


async def test_a_failed_fetch_keeps_the_keys_it_had(
    fake: FakeGitHub, transport: httpx.ASGITransport, clock: Clock
) -> None:
    keys = JwksCache(FailingSource(HttpJwksSource(fake.url, transport)), monotonic=clock)
    verifier = OidcVerifier(issuer=fake.url, audience=SERVICE_URL, keys=keys)
    await verifier.verify(fake.oidc.mint(SERVICE_URL))
    clock.now += 61
    with pytest.raises(HbenchError) as refused:
        await verifier.verify(fake.oidc.mint(SERVICE_URL, kid="unheard-of"))
    assert refused.value.code == "oidc-key-unknown"
    assert (await verifier.verify(fake.oidc.mint(SERVICE_URL))).repository_id == 74


async def test_an_unreachable_issuer_is_said_so(fake: FakeGitHub) -> None:
    down = httpx.MockTransport(lambda request: httpx.Response(503))
    keys = JwksCache(HttpJwksSource(fake.url, down))
    verifier = OidcVerifier(issuer=fake.url, audience=SERVICE_URL, keys=keys)
    with pytest.raises(HbenchError) as refused:
        await verifier.verify(fake.oidc.mint(SERVICE_URL))
    assert refused.value.code == "oidc-issuer-unavailable"


async def test_a_discovery_document_for_another_issuer_is_not_trusted(
    fake: FakeGitHub, transport: httpx.ASGITransport
) -> None:
    keys = JwksCache(HttpJwksSource("http://127.0.0.1:9/other", transport))
    verifier = OidcVerifier(issuer=fake.url, audience=SERVICE_URL, keys=keys)
    with pytest.raises(HbenchError) as refused:
        await verifier.verify(fake.oidc.mint(SERVICE_URL))
    assert refused.value.code == "oidc-issuer-unavailable"


RELEASE = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/tags/v0.3.0"
RELEASED_AT = "c" * 40


@pytest.fixture
def pinned(fake: FakeGitHub, keys: JwksCache) -> OidcVerifier:
    """A verifier trusting one release of the reusable workflow, at its commit."""
    trusted = trusted_workflows([f"{RELEASE}={RELEASED_AT}"])
    return OidcVerifier(issuer=fake.url, audience=SERVICE_URL, keys=keys, trusted=trusted)


async def test_the_released_workflow_at_its_commit_is_trusted(
    pinned: OidcVerifier, fake: FakeGitHub
) -> None:
    token = fake.oidc.mint(SERVICE_URL, job_workflow_ref=RELEASE, job_workflow_sha=RELEASED_AT)
    claims = await pinned.verify(token)
    assert (claims.job_workflow_ref, claims.job_workflow_sha) == (RELEASE, RELEASED_AT)
    assert is_trusted(claims, pinned.trusted)
    # The same release on a runner of the caller's own is accepted, but not trusted.
    self_hosted = await pinned.verify(
        fake.oidc.mint(
            SERVICE_URL, job_workflow_ref=RELEASE, job_workflow_sha=RELEASED_AT,
            runner_environment="self-hosted",
        )
    )  # fmt: skip
    assert not is_trusted(self_hosted, pinned.trusted)


async def test_a_ref_the_caller_chose_is_refused(pinned: OidcVerifier, fake: FakeGitHub) -> None:
    branch = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/heads/my-branch"
    refused = await refusal(
        pinned, fake.oidc.mint(SERVICE_URL, job_workflow_ref=branch, job_workflow_sha=RELEASED_AT)
    )
    assert refused.code == "oidc-workflow-untrusted"
    assert "a ref of the reusable workflow this service does not trust" in refused.detail
    assert f"uses: {RELEASE}" in refused.detail
    # A workflow of the caller's own is refused too, once releases are named.
    assert (await refusal(pinned, fake.oidc.mint(SERVICE_URL))).code == "oidc-workflow-untrusted"


async def test_a_release_ref_at_another_commit_is_refused(
    pinned: OidcVerifier, fake: FakeGitHub
) -> None:
    moved = fake.oidc.mint(SERVICE_URL, job_workflow_ref=RELEASE, job_workflow_sha="d" * 40)
    refused = await refusal(pinned, moved)
    assert refused.code == "oidc-workflow-sha-unknown"
    assert "the ref was moved, or the workflow came from elsewhere" in refused.detail


async def test_without_releases_named_any_workflow_issues_and_none_is_trusted(
    verifier: OidcVerifier, fake: FakeGitHub
) -> None:
    claims = await verifier.verify(fake.oidc.mint(SERVICE_URL))
    assert not is_trusted(claims, verifier.trusted)


async def test_a_token_is_used_once(verifier: OidcVerifier, fake: FakeGitHub, db: Session) -> None:
    token = fake.oidc.mint(SERVICE_URL)
    claims = await verifier.verify(token)
    consume_jti(db, claims)
    db.commit()
    again = await verifier.verify(token)  # still a valid token: only its jti tells
    with pytest.raises(HbenchError) as refused:
        consume_jti(db, again)
    assert refused.value.code == "oidc-token-reused"
    db.rollback()
    assert used(db) == [claims.jti]


async def test_used_jtis_are_forgotten_once_their_tokens_expired(
    verifier: OidcVerifier, fake: FakeGitHub, db: Session
) -> None:
    first = await verifier.verify(fake.oidc.mint(SERVICE_URL))
    consume_jti(db, first)
    db.commit()
    later = datetime.now(UTC) + timedelta(minutes=10)
    second = await verifier.verify(fake.oidc.mint(SERVICE_URL))
    consume_jti(db, second, now=later)
    db.commit()
    assert used(db) == [second.jti]

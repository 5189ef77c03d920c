"""The fake GitHub's OIDC issuer: its signing keys, and ID tokens shaped like those a
GitHub Actions job gets with `permissions: id-token: write`.

The claims follow GitHub's documentation ("About security hardening with OpenID
Connect"): numeric ids arrive as strings, `sub` is `repo:OWNER/REPO:ref:REF`.
`rotate()` starts signing with a new key, to test that a verifier fetches the keys again
when it meets an unknown `kid`.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from jwt.algorithms import RSAAlgorithm

if TYPE_CHECKING:
    from tests.fakes.github.state import FakeGitHub

REMOVE = object()
"""Pass as a claim's value to `mint` to leave that claim out."""


@dataclass
class SigningKey:
    kid: str
    key: RSAPrivateKey
    published: bool = True

    def jwk(self) -> dict[str, Any]:
        data = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return {**data, "kid": self.kid, "alg": "RS256", "use": "sig"}


class FakeOidcIssuer:
    """Keys (the newest signs), the JWKS it publishes, and a token mint."""

    def __init__(self, github: FakeGitHub, keys: list[RSAPrivateKey]) -> None:
        if not keys:
            raise ValueError("the issuer needs at least one key")
        self.github = github
        self._spare = list(keys)
        self.keys: list[SigningKey] = []
        self.jwks_fetches = 0
        self.rotate()

    @property
    def url(self) -> str:
        return self.github.url

    @property
    def current(self) -> SigningKey:
        return self.keys[-1]

    def rotate(self, *, publish: bool = True) -> SigningKey:
        """Sign from now on with a fresh key (published in the JWKS unless told not to)."""
        if not self._spare:
            raise ValueError("no spare keys left: give the issuer more keys")
        key = SigningKey(kid=secrets.token_hex(8), key=self._spare.pop(0), published=publish)
        self.keys.append(key)
        return key

    def jwks(self) -> dict[str, Any]:
        self.jwks_fetches += 1
        return {"keys": [key.jwk() for key in self.keys if key.published]}

    def claims(self, audience: str, **changes: Any) -> dict[str, Any]:
        """A GitHub Actions job's claims for `octo-org/octo-repo`, with changes applied."""
        now = datetime.now(UTC)
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": audience,
            "exp": int((now + timedelta(minutes=5)).timestamp()),
            "iat": int(now.timestamp()),
            "nbf": int(now.timestamp()),
            "jti": str(uuid.uuid4()),
            "sub": "repo:octo-org/octo-repo:ref:refs/heads/main",
            "ref": "refs/heads/main",
            "sha": "a" * 40,
            "repository": "octo-org/octo-repo",
            "repository_id": "74",
            "repository_owner": "octo-org",
            "repository_owner_id": "65",
            "run_id": "1234567890",
            "run_number": "7",
            "run_attempt": "1",
            "actor": "octocat",
            "actor_id": "583231",
            "workflow": "hbench",
            "workflow_ref": "octo-org/octo-repo/.github/workflows/hbench.yml@refs/heads/main",
            "job_workflow_ref": "octo-org/octo-repo/.github/workflows/hbench.yml@refs/heads/main",
            "workflow_sha": "a" * 40,
            "job_workflow_sha": "a" * 40,
            "event_name": "workflow_dispatch",
            "ref_type": "branch",
            "runner_environment": "github-hosted",
        }
        for name, value in changes.items():
            if value is REMOVE:
                claims.pop(name, None)
            else:
                claims[name] = value
        return claims

    def mint(
        self,
        audience: str,
        *,
        key: SigningKey | None = None,
        kid: str | None = None,
        **changes: Any,
    ) -> str:
        """An ID token for `audience`, signed by `key` (the current one by default) and
        naming `kid` in its header (the key's own by default)."""
        signer = key or self.current
        return jwt.encode(
            self.claims(audience, **changes),
            signer.key,
            algorithm="RS256",
            headers={"kid": kid or signer.kid},
        )

"""Verifying GitHub Actions OIDC tokens, as PyPI's trusted publishing does
(pypi/warehouse `warehouse/oidc/`).

A workflow job with `permissions: id-token: write` asks GitHub for a token whose audience
is this service's URL, and sends it in place of an API token. The service checks, in
order: the RS256 signature against the issuer's published keys (cached by `kid`, fetched
again when an unknown `kid` shows up, at most once a minute), then every registered claim
(issuer, exactly our audience, expiry and issue time with 30 s of leeway), then the
GitHub claims it records, then the trusted workflows. Every failure of a table is
reported, not only the first. Last, `app.auth.jti.consume_jti` records the token's `jti`
in the caller's transaction, so one token issues one run. The claims model and the trusted
workflows are `app.auth.claims`, the issuer's keys `app.auth.jwks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any, TypeGuard

import jwt
from fastapi import Depends, Request
from pydantic import ValidationError

from app.auth.claims import LEEWAY, ActionsClaims, TrustedWorkflow, trusted_workflows
from app.auth.jwks import HttpJwksSource, JwksCache
from app.db.models import utcnow
from app.dependencies import SettingsDep
from hbench.errors import HbenchError, Problem

ALGORITHMS = ["RS256"]


class OidcVerifier:
    """Verifies tokens from one issuer for one audience; keeps the issuer's keys."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        keys: JwksCache,
        trusted: Sequence[TrustedWorkflow] = (),
        leeway: timedelta = LEEWAY,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self.trusted = tuple(trusted)
        self.leeway = leeway

    async def verify(self, token: str, now: datetime | None = None) -> ActionsClaims:
        """The token's claims, or the refusal listing what is wrong with it. Records
        nothing: call `consume_jti` in the transaction that acts on the token."""
        kid = signing_key_id(token)
        key = await self.keys.key(kid)
        try:
            payload: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                # The signature only: the claims are checked below, every one of them.
                options={
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "verify_aud": False,
                    "verify_iss": False,
                },
            )
        except jwt.InvalidSignatureError:
            raise HbenchError(
                "oidc-signature-invalid", "the token's signature does not match the issuer's key"
            ) from None
        except jwt.PyJWTError as error:
            raise HbenchError("oidc-token-invalid", f"the token can't be read: {error}") from None
        moment = (now or utcnow()).timestamp()
        refuse(registered_claim_problems(payload, self.issuer, self.audience, moment, self.leeway))
        claims = parse_claims(payload)
        refuse(consistency_problems(claims))
        refuse(workflow_problems(claims, self.trusted))
        return claims


def signing_key_id(token: str) -> str:
    """The `kid` of a token's header, which must name RS256."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as error:
        raise HbenchError("oidc-token-invalid", f"the token can't be read: {error}") from None
    if header.get("alg") not in ALGORITHMS:
        raise HbenchError(
            "oidc-token-invalid", f"the token is signed with {header.get('alg')!r}, not RS256"
        )
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise HbenchError("oidc-token-invalid", "the token's header names no key (`kid`)")
    return kid


def registered_claim_problems(
    payload: dict[str, Any], issuer: str, audience: str, now: float, leeway: timedelta
) -> list[Problem]:
    """Issuer, audience (exactly ours, not a list holding it), expiry and issue time."""
    slack = leeway.total_seconds()
    problems = []
    if payload.get("iss") != issuer:
        problems.append(
            Problem(
                "oidc-issuer-mismatch",
                f"the token was issued by {payload.get('iss')!r}, not {issuer}",
                "claims.iss",
            )
        )
    if payload.get("aud") != audience:
        problems.append(
            Problem(
                "oidc-audience-mismatch",
                f"the token is for {payload.get('aud')!r}, not this service ({audience}); "
                f"request it with audience={audience}",
                "claims.aud",
            )
        )
    exp, iat, nbf = payload.get("exp"), payload.get("iat"), payload.get("nbf")
    if not is_number(exp) or not is_number(iat):
        problems.append(
            Problem("oidc-claims-invalid", "the token lacks a numeric exp or iat", "claims.exp")
        )
    elif now > exp + slack:
        problems.append(
            Problem("oidc-token-expired", "the token has expired; request a new one", "claims.exp")
        )
    if (is_number(iat) and iat > now + slack) or (is_number(nbf) and nbf > now + slack):
        problems.append(
            Problem(
                "oidc-token-not-yet-valid",
                "the token is not valid yet; check the runner's clock",
                "claims.iat",
            )
        )
    return problems


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_claims(payload: dict[str, Any]) -> ActionsClaims:
    try:
        return ActionsClaims.model_validate(payload)
    except ValidationError as error:
        raise HbenchError.from_problems(
            [
                Problem(
                    "oidc-claims-invalid",
                    f"claim {'.'.join(str(p) for p in item['loc'])}: {item['msg']}",
                    "claims." + ".".join(str(p) for p in item["loc"]),
                )
                for item in error.errors()
            ]
        ) from None


def consistency_problems(claims: ActionsClaims) -> list[Problem]:
    """The claims must describe one repository: `sub`, the owner and the calling
    workflow all name the same one (GitHub compares names without case)."""
    repository = claims.repository.lower()
    checks = [
        (
            claims.sub.lower().startswith(f"repo:{repository}:"),
            f"sub {claims.sub!r} is not about {claims.repository}",
            "claims.sub",
        ),
        (
            repository.split("/")[0] == claims.repository_owner.lower(),
            f"repository_owner {claims.repository_owner!r} does not own {claims.repository}",
            "claims.repository_owner",
        ),
        (
            claims.workflow_ref.lower().startswith(f"{repository}/"),
            f"workflow_ref {claims.workflow_ref!r} is not in {claims.repository}",
            "claims.workflow_ref",
        ),
    ]
    return [Problem("oidc-claims-invalid", message, path) for ok, message, path in checks if not ok]


def workflow_problems(claims: ActionsClaims, trusted: Sequence[TrustedWorkflow]) -> list[Problem]:
    """With trusted workflows configured, the job must run one of their releases, at the
    commit it was released at: a branch, another tag, a fork or an edited copy won't do."""
    if not trusted:
        return []
    ref, sha = claims.job_workflow_ref, claims.job_workflow_sha
    if any(w.ref == ref and w.sha == sha for w in trusted):
        return []
    releases = ", ".join(sorted({w.ref.split("@", 1)[1] for w in trusted}))
    usage = f"uses: {trusted[-1].ref}"
    if any(w.ref == ref for w in trusted):
        return [
            Problem(
                "oidc-workflow-sha-unknown",
                f"the job runs {ref} at commit {sha}, but that release was made at another "
                f"commit: the ref was moved, or the workflow came from elsewhere. Call the "
                f"release as published (`{usage}` in your workflow's job)",
                "claims.job_workflow_sha",
            )
        ]
    ours = any(w.path == ref.split("@", 1)[0] for w in trusted)
    what = (
        "a ref of the reusable workflow this service does not trust"
        if ours
        else "a workflow this service does not trust"
    )
    return [
        Problem(
            "oidc-workflow-untrusted",
            f"the job runs {ref}, {what}. Call one of its releases ({releases}) from your "
            f"workflow, such as `{usage}`",
            "claims.job_workflow_ref",
        )
    ]


def refuse(problems: list[Problem]) -> None:
    if problems:
        raise HbenchError.from_problems(problems)


def get_oidc_verifier(request: Request, settings: SettingsDep) -> OidcVerifier:
    """The app's verifier, made on first use and kept: it holds the issuer's keys.
    A FastAPI dependency: tests override it with one reading the fake issuer."""
    verifier = getattr(request.app.state, "oidc_verifier", None)
    if isinstance(verifier, OidcVerifier):
        return verifier
    if settings.public_url is None:
        raise HbenchError(
            "github-not-configured",
            "OIDC tokens need the service's public URL as their audience: set HBENCH_PUBLIC_URL",
        )
    verifier = OidcVerifier(
        issuer=settings.oidc_issuer,
        audience=settings.public_url,
        keys=JwksCache(HttpJwksSource(settings.oidc_issuer)),
        trusted=trusted_workflows(settings.trusted_workflows),
    )
    request.app.state.oidc_verifier = verifier
    return verifier


OidcVerifierDep = Annotated[OidcVerifier, Depends(get_oidc_verifier)]

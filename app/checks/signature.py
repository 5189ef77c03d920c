"""The upload's `signature` check: a Sigstore bundle beside the manifest
(`manifest.sigstore.json`), checked against the manifest's digest, the trusted releases of
the reusable workflow and GitHub Actions' issuer (`hbench.provenance`), and, for an upload
bound to its workflow run, that run.

It never refuses the upload: a bundle that fails is not kept, the job is stored with the
evidence it has, and the check's note ends with the refusal's code. The bundle's bytes are
read as they arrived, before redaction touched the job's files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.auth.claims import ActionsClaims, trusted_workflows
from app.db.summary import SummarySignature
from app.settings import Settings
from hbench.errors import HbenchError, Problem
from hbench.jobs.manifest import SIGNATURE_NAME
from hbench.provenance import (
    BUNDLE_MAX_BYTES,
    GITHUB,
    SignedDigest,
    TrustedRelease,
    check_signature,
)

CHECK = "signature"
TITLE = "A signature from a trusted workflow, if sent, signs the manifest's digest"


@dataclass(frozen=True)
class SigningPolicy:
    """What a signature must name to count; sent to the upload workers, so plain data."""

    trusted: tuple[TrustedRelease, ...]
    root: Path | None
    """The Sigstore trusted root's file; None for Sigstore's public root."""
    issuer: str

    @classmethod
    def of(cls, settings: Settings) -> SigningPolicy:
        releases = tuple(
            TrustedRelease(w.ref, w.sha) for w in trusted_workflows(settings.trusted_workflows)
        )
        return cls(releases, settings.sigstore_trusted_root, settings.oidc_issuer)


@dataclass(frozen=True)
class SignatureOutcome:
    """The check's result as the stored job shows it, and the signature kept, if any."""

    check: dict[str, Any]
    kept: SummarySignature | None = None


def check_upload_signature(
    root: Path,
    files: Mapping[str, tuple[int, str]],
    digest: str,
    policy: SigningPolicy,
    claims: ActionsClaims | None = None,
) -> SignatureOutcome | None:
    """Check the job folder's bundle for `digest`; None when it has none (an upload that
    sends no signature shows no check of one)."""
    if SIGNATURE_NAME not in files:
        return None
    with (root / SIGNATURE_NAME).open("rb") as stream:
        raw = stream.read(BUNDLE_MAX_BYTES + 1)
    try:
        signed = check_signature(
            raw, digest, policy.trusted, root=policy.root, issuer=policy.issuer
        )
        problems = run_problems(signed, claims)
        if problems:
            raise HbenchError.from_problems(problems)
    except HbenchError as refused:
        note = "; ".join(p.detail for p in refused.problems)
        return _outcome("failed", f"not kept: {note}")
    kept = SummarySignature.of(signed, raw.decode())
    return SignatureOutcome(
        _outcome("passed", f"{signed.signer.workflow_ref} signed the manifest's digest").check,
        kept,
    )


def run_problems(signed: SignedDigest, claims: ActionsClaims | None) -> list[Problem]:
    """For an upload bound to its workflow run, the bundle must come from that run."""
    if claims is None:
        return []
    run = f"{GITHUB}{claims.repository}/actions/runs/{claims.run_id}/attempts/{claims.run_attempt}"
    if signed.signer.run_url == run:
        return []
    return [
        Problem(
            "signature-run-mismatch",
            f"it was signed in {signed.signer.run_url or 'no named workflow run'}, but the "
            f"upload comes from {run}: sign and upload in the same job",
            SIGNATURE_NAME,
        )
    ]


def _outcome(status: str, note: str) -> SignatureOutcome:
    return SignatureOutcome({"rule": CHECK, "title": TITLE, "status": status, "note": note})

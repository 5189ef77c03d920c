"""Signed provenance: a Sigstore bundle over a sealed job's manifest digest, made by the
reusable workflow with its GitHub Actions OIDC identity, and checked offline.

The bundle is the format of GitHub's artifact attestations and PyPI's PEP 740
attestations (`application/vnd.dev.sigstore.bundle.v0.3+json`): a Fulcio certificate for
the job's workflow identity, a signature over the sha256, and a Rekor entry with its
inclusion proof and promise. `check_signature` runs a table of our own checks first, so a
refusal names its cause with a code (another digest, another workflow, another commit,
another issuer, a certificate that ran out, no log entry), then sigstore-python's own
`Verifier`, against a trusted root (Sigstore's public one, as sigstore-python ships it, or
a file), which checks the chain, the SCT, the log's proof and promise and the signature.

What a bundle that passes proves, and no more: the named workflow, at that commit,
signed that digest, and the transparency log holds the signature.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from cryptography.x509 import Certificate, ExtensionNotFound, ObjectIdentifier
from sigstore.errors import Error as SigstoreError
from sigstore.hashes import Hashed
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier
from sigstore.verify.policy import (
    AllOf,
    Identity,
    OIDCBuildSignerDigest,
    OIDCBuildSignerURI,
    OIDCIssuerV2,
)
from sigstore_models.common.v1 import HashAlgorithm
from sigstore_models.trustroot import v1 as trustroot_v1

from hbench.errors import HbenchError, Problem
from hbench.jobs.manifest import SIGNATURE_NAME
from hbench.limits import BUNDLE_MAX_BYTES

GITHUB_ACTIONS_ISSUER = "https://token.actions.githubusercontent.com"
GITHUB = "https://github.com/"
BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
PUBLIC_ROOT = "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"
"""The folder of sigstore-python's package holding the public instance's trusted root."""

__all__ = ["BUNDLE_MAX_BYTES", "SIGNATURE_NAME"]

_FULCIO = "1.3.6.1.4.1.57264.1."
_ISSUER_V2 = ObjectIdentifier(_FULCIO + "8")
_BUILD_SIGNER_URI = ObjectIdentifier(_FULCIO + "9")
_BUILD_SIGNER_DIGEST = ObjectIdentifier(_FULCIO + "10")
_RUNNER_ENVIRONMENT = ObjectIdentifier(_FULCIO + "11")
_SOURCE_REPOSITORY_URI = ObjectIdentifier(_FULCIO + "12")
_SOURCE_REPOSITORY_DIGEST = ObjectIdentifier(_FULCIO + "13")
_RUN_INVOCATION_URI = ObjectIdentifier(_FULCIO + "21")


@dataclass(frozen=True)
class TrustedRelease:
    """A release of the reusable workflow whose signatures count: its ref and commit."""

    ref: str
    """OWNER/REPO/.github/workflows/FILE.yml@REF, as GitHub's `job_workflow_ref`."""
    sha: str


@dataclass(frozen=True)
class Signer:
    """Who the signing certificate says signed: what Fulcio copied from the OIDC token."""

    issuer: str | None
    workflow_ref: str | None
    workflow_sha: str | None
    repository: str | None
    repository_sha: str | None
    run_url: str | None
    runner: str | None
    valid_from: datetime
    valid_until: datetime


@dataclass(frozen=True)
class SignedDigest:
    """A bundle that passed: its signer, the digest, and its place in the log."""

    digest: str
    signer: Signer
    log_index: int
    logged_at: datetime


def load_trusted_root(path: Path | None = None) -> TrustedRoot:
    """The trusted root in `path`, or Sigstore's public one as sigstore-python ships it
    (read from the package: no TUF refresh, nothing fetched); `signature-root-invalid`
    when the file can't be read as one."""
    try:
        if path is None:
            shipped = importlib.resources.files("sigstore._store") / PUBLIC_ROOT
            raw = (shipped / "trusted_root.json").read_bytes()
        else:
            raw = path.read_bytes()
        return TrustedRoot(trustroot_v1.TrustedRoot.from_json(raw))
    except (OSError, ValueError, SigstoreError) as error:
        where = path if path is not None else "sigstore-python's public trusted root"
        raise HbenchError(
            "signature-root-invalid",
            f"{where} can't be read as a Sigstore trusted root ({error}); name a "
            "trustedroot+json file, or leave the setting out for Sigstore's public root",
        ) from None


@lru_cache(maxsize=8)
def _verifier(path: Path | None) -> Verifier:
    return Verifier(trusted_root=load_trusted_root(path))


def read_bundle(raw: bytes) -> Bundle:
    """The bundle in `raw`, or why it isn't one: `signature-bundle-invalid`, or
    `signature-log-entry-missing` for a bundle without its transparency log entry."""
    if len(raw) > BUNDLE_MAX_BYTES:
        raise _refusal("signature-bundle-invalid", f"it is {len(raw)} bytes, not a bundle")
    try:
        bundle = Bundle.from_json(raw)
    except SigstoreError as error:
        if "log entry" in str(error) or "inclusion" in str(error):
            raise _refusal(
                "signature-log-entry-missing",
                "it has no transparency log entry with its inclusion proof, so nothing shows "
                "the signature was logged; sign with the public Sigstore instance, which "
                "logs every signature",
            ) from None
        raise _refusal("signature-bundle-invalid", f"it can't be read ({error})") from None
    except (ValueError, TypeError) as error:
        raise _refusal("signature-bundle-invalid", f"it can't be read ({error})") from None
    return bundle


def signer_of(certificate: Certificate) -> Signer:
    """The identity a Fulcio certificate for a GitHub Actions job names."""
    build_uri = _text(certificate, _BUILD_SIGNER_URI)
    source_uri = _text(certificate, _SOURCE_REPOSITORY_URI)
    return Signer(
        issuer=_text(certificate, _ISSUER_V2),
        workflow_ref=build_uri.removeprefix(GITHUB) if build_uri else None,
        workflow_sha=_text(certificate, _BUILD_SIGNER_DIGEST),
        repository=source_uri.removeprefix(GITHUB) if source_uri else None,
        repository_sha=_text(certificate, _SOURCE_REPOSITORY_DIGEST),
        run_url=_text(certificate, _RUN_INVOCATION_URI),
        runner=_text(certificate, _RUNNER_ENVIRONMENT),
        valid_from=certificate.not_valid_before_utc,
        valid_until=certificate.not_valid_after_utc,
    )


def check_signature(
    raw: bytes,
    digest: str,
    trusted: Sequence[TrustedRelease],
    *,
    root: Path | None = None,
    issuer: str = GITHUB_ACTIONS_ISSUER,
) -> SignedDigest:
    """Check a bundle signs `digest` (sha256, hex) as one of the `trusted` releases, with
    `issuer`'s identity, against the trusted root in `root` (Sigstore's public one when
    None); every failure of our table first, then sigstore-python's verifier. Raises with
    the problems; returns what passed."""
    bundle = read_bundle(raw)
    signer = signer_of(bundle.signing_certificate)
    logged_at = _logged_at(bundle)
    release = _release(signer, trusted)
    problems = [
        *_issuer_problems(signer, issuer),
        *_workflow_problems(signer, trusted),
        *_digest_problems(bundle, digest),
        *_validity_problems(signer, logged_at),
    ]
    if problems:
        raise HbenchError.from_problems(problems)
    if release is None:  # unreachable: `_workflow_problems` names it
        raise _refusal("signature-workflow-untrusted", "no trusted release signed it")
    policy = AllOf(
        [
            Identity(identity=GITHUB + release.ref),
            OIDCIssuerV2(issuer),
            OIDCBuildSignerURI(GITHUB + release.ref),
            OIDCBuildSignerDigest(release.sha),
        ]
    )
    hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(digest))
    try:
        _verifier(root).verify_artifact(hashed, bundle, policy)
    except SigstoreError as error:
        raise _refusal(
            "signature-invalid",
            f"Sigstore's verifier refused it against the trusted root: {error}",
        ) from None
    return SignedDigest(digest, signer, int(bundle.log_entry._inner.log_index), logged_at)


def _release(signer: Signer, trusted: Sequence[TrustedRelease]) -> TrustedRelease | None:
    return next(
        (t for t in trusted if (t.ref, t.sha) == (signer.workflow_ref, signer.workflow_sha)),
        None,
    )


def _issuer_problems(signer: Signer, issuer: str) -> list[Problem]:
    if signer.issuer == issuer:
        return []
    return [
        Problem(
            "signature-issuer-mismatch",
            f"its certificate was issued for an identity from {signer.issuer!r}, not "
            f"GitHub Actions ({issuer}): sign in the workflow's job, with its OIDC token",
            SIGNATURE_NAME,
        )
    ]


def _workflow_problems(signer: Signer, trusted: Sequence[TrustedRelease]) -> list[Problem]:
    if not trusted:
        return [
            Problem(
                "signature-workflow-untrusted",
                "this service trusts no release of the reusable workflow "
                "(HBENCH_TRUSTED_WORKFLOWS is empty), so no signature counts",
                SIGNATURE_NAME,
            )
        ]
    if _release(signer, trusted) is not None:
        return []
    if any(t.ref == signer.workflow_ref for t in trusted):
        return [
            Problem(
                "signature-workflow-sha-mismatch",
                f"it was signed by {signer.workflow_ref} at commit {signer.workflow_sha}, "
                "but that release was made at another commit: call the release as published",
                SIGNATURE_NAME,
            )
        ]
    releases = ", ".join(sorted(t.ref for t in trusted))
    return [
        Problem(
            "signature-workflow-untrusted",
            f"it was signed by {signer.workflow_ref or 'no workflow'}, not a trusted release "
            f"of the reusable workflow ({releases})",
            SIGNATURE_NAME,
        )
    ]


def _digest_problems(bundle: Bundle, digest: str) -> list[Problem]:
    message = bundle._inner.message_signature
    signed = message.message_digest if message is not None else None
    if message is None:
        return [
            Problem(
                "signature-bundle-invalid",
                "it signs an envelope, not a digest: sign the manifest's sha256",
                SIGNATURE_NAME,
            )
        ]
    if signed is None or signed.digest.hex() == digest:
        return []  # without a stated digest the verifier checks the signature over ours
    return [
        Problem(
            "signature-digest-mismatch",
            f"it signs {signed.digest.hex()[:16]}…, not this job's manifest digest "
            f"{digest[:16]}…: it is another job's signature, or the job was sealed again "
            "after it was signed",
            SIGNATURE_NAME,
        )
    ]


def _validity_problems(signer: Signer, logged_at: datetime) -> list[Problem]:
    if signer.valid_from <= logged_at <= signer.valid_until:
        return []
    return [
        Problem(
            "signature-certificate-expired",
            f"its certificate was valid from {signer.valid_from:%Y-%m-%d %H:%M:%S} to "
            f"{signer.valid_until:%H:%M:%S} UTC, but the log took the signature at "
            f"{logged_at:%Y-%m-%d %H:%M:%S}: sign within the certificate's ten minutes",
            SIGNATURE_NAME,
        )
    ]


def _logged_at(bundle: Bundle) -> datetime:
    seconds = bundle.log_entry._inner.integrated_time
    return datetime.fromtimestamp(int(seconds or 0), UTC)


def _text(certificate: Certificate, oid: ObjectIdentifier) -> str | None:
    """A Fulcio extension's value: a DER UTF8String (the extensions from 1.8 on)."""
    try:
        value: bytes = certificate.extensions.get_extension_for_oid(oid).value.value  # type: ignore[attr-defined]  # an UnrecognizedExtension's bytes
    except ExtensionNotFound:
        return None
    if len(value) < 2 or value[0] != 0x0C:
        return None
    size, start = value[1], 2
    if size & 0x80:
        count = size & 0x7F
        size, start = int.from_bytes(value[2 : 2 + count], "big"), 2 + count
    try:
        return value[start : start + size].decode()
    except UnicodeDecodeError:
        return None


def _refusal(code: str, why: str) -> HbenchError:
    return HbenchError(
        code, f"{SIGNATURE_NAME} is not a signature this service takes: {why}", path=SIGNATURE_NAME
    )

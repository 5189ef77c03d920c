"""The audit's check of each run's signed provenance, offline, from the checkout alone.

A run whose record has a `signature` must have the bundle it names beside it, and the
bundle must pass the checks the service made when it took it (`hbench.provenance`), now
against the trusted root the auditor names (Sigstore's public one by default, as
sigstore-python ships it; nothing is fetched): it signs the run's manifest digest, with
an identity from the issuer the auditor names (GitHub Actions' by default), as the
workflow the run's provenance says ran, at that commit. The record's account of the
signer (repository, run, runner, log index) must be what the certificate and the log
entry say.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from hbench.errors import HbenchError
from hbench.provenance import GITHUB_ACTIONS_ISSUER, SignedDigest, TrustedRelease, check_signature
from registry.datarepo.models import PublishedRun
from registry.signature import RunSignature
from sitebuild.audit_diff import Difference
from sitebuild.source import DataFiles


@dataclass(frozen=True)
class SignaturePolicy:
    """What the auditor holds signatures to: the trusted root's file (None: Sigstore's
    public root) and the OIDC issuer a signer's identity must come from."""

    trusted_root: Path | None = None
    issuer: str = GITHUB_ACTIONS_ISSUER


def signature_differences(
    runs: Iterable[tuple[str, PublishedRun]], files: DataFiles, policy: SignaturePolicy
) -> Iterator[Difference]:
    """Every difference between the signed runs' records and their bundles."""
    for path, run in runs:
        if run.signature is not None:
            yield from _signed(path, run, run.signature, files, policy)


def _signed(
    path: str, run: PublishedRun, signature: RunSignature, files: DataFiles,
    policy: SignaturePolicy,
) -> Iterator[Difference]:  # fmt: skip
    if signature.bundle not in files:
        yield _difference(
            "audit-signature-missing", path, run, "signature.bundle", signature.bundle, None,
            f"the record names the bundle {signature.bundle}, which the repository lacks",
        )  # fmt: skip
        return
    provenance = run.provenance
    ran = (provenance.job_workflow_ref, provenance.job_workflow_sha)
    if ran != (signature.workflow_ref, signature.workflow_sha):
        yield _difference(
            "audit-signature-invalid", path, run, "signature.workflowRef",
            f"{signature.workflow_ref}@{signature.workflow_sha}",
            f"{ran[0]}@{ran[1]}",
            "the workflow that signed is not the one the run's provenance says ran",
        )  # fmt: skip
    try:
        signed = check_signature(
            files.raw(signature.bundle),
            run.manifest_digest or "",
            [TrustedRelease(signature.workflow_ref, signature.workflow_sha)],
            root=policy.trusted_root,
            issuer=policy.issuer,
        )
    except HbenchError as refused:
        if refused.code == "signature-root-invalid":
            raise
        for problem in refused.problems:
            yield _difference(
                "audit-signature-invalid", signature.bundle, run, "signature", None, None,
                problem.detail,
            )  # fmt: skip
        return
    yield from _record_differences(path, run, signature, signed)


def _record_differences(
    path: str, run: PublishedRun, signature: RunSignature, signed: SignedDigest
) -> Iterator[Difference]:
    """The record's account of the signer beside the certificate's and the log's."""
    signer = signed.signer
    said: dict[str, tuple[JsonValue, JsonValue]] = {
        "signature.digest": (signature.digest, signed.digest),
        "signature.issuer": (signature.issuer, signer.issuer),
        "signature.repository": (signature.repository, signer.repository),
        "signature.repositorySha": (signature.repository_sha, signer.repository_sha),
        "signature.runUrl": (signature.run_url, signer.run_url),
        "signature.runner": (signature.runner, signer.runner),
        "signature.logIndex": (signature.log_index, signed.log_index),
        "signature.loggedAt": (signature.logged_at.isoformat(), signed.logged_at.isoformat()),
    }
    for field, (held, bundle) in said.items():
        if held != bundle:
            yield _difference(
                "audit-signature-invalid", path, run, field, held, bundle,
                f"the record holds {held!r}, the signature's bundle {bundle!r}",
            )  # fmt: skip


def _difference(  # noqa: PLR0917 - a private helper; each call names what it found
    code: str, path: str, run: PublishedRun, field: str, held: JsonValue, other: JsonValue,
    note: str,
) -> Difference:  # fmt: skip
    return Difference(code, path, field, held, other, board=run.board, item=run.id, note=note)

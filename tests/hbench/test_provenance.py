"""Signed provenance, checked by sigstore-python's own verifier against a trusted root of
our making (tests/support/sigstore_local.py): a bundle the trusted workflow signed for the
manifest's digest passes; every other one is refused with its code."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from hbench.errors import HbenchError
from hbench.provenance import TrustedRelease, check_signature, load_trusted_root
from tests.support.sigstore_local import LocalSigstore, SigningIdentity

DIGEST = hashlib.sha256(b"the manifest").hexdigest()
IDENTITY = SigningIdentity()
TRUSTED = (TrustedRelease(IDENTITY.job_workflow_ref, IDENTITY.job_workflow_sha),)


@pytest.fixture(scope="module")
def sigstore() -> LocalSigstore:
    return LocalSigstore()


@pytest.fixture(scope="module")
def root(sigstore: LocalSigstore, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sigstore.write_trusted_root(tmp_path_factory.mktemp("sigstore") / "root.json")


def codes(raw: str, root: Path, digest: str = DIGEST) -> list[str]:
    with pytest.raises(HbenchError) as refused:
        check_signature(raw.encode(), digest, TRUSTED, root=root)
    return [p.code for p in refused.value.problems]


def test_the_trusted_workflow_signing_the_digest_passes(
    sigstore: LocalSigstore, root: Path
) -> None:
    signed = check_signature(sigstore.sign(DIGEST).encode(), DIGEST, TRUSTED, root=root)
    assert signed.digest == DIGEST
    assert signed.signer.workflow_ref == IDENTITY.job_workflow_ref
    assert signed.signer.workflow_sha == IDENTITY.job_workflow_sha
    assert signed.signer.repository == IDENTITY.repository
    assert signed.signer.repository_sha == IDENTITY.sha
    assert signed.signer.issuer == "https://token.actions.githubusercontent.com"
    assert signed.signer.run_url == "https://github.com/octo-org/evals/actions/runs/4242/attempts/1"
    assert signed.log_index == 0


def test_a_bundle_for_another_digest_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    other = hashlib.sha256(b"another job").hexdigest()
    assert codes(sigstore.sign(other), root) == ["signature-digest-mismatch"]


def test_a_bundle_without_its_stated_digest_is_refused_by_the_verifier(
    sigstore: LocalSigstore, root: Path
) -> None:
    """With no messageDigest to compare, sigstore's verifier checks the signature over the
    manifest's digest itself, and it does not match."""
    other = hashlib.sha256(b"another job").hexdigest()
    bundle = json.loads(sigstore.sign(other))
    del bundle["messageSignature"]["messageDigest"]
    assert codes(json.dumps(bundle), root) == ["signature-invalid"]


def test_another_workflow_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    fork = replace(IDENTITY, job_workflow_ref="mallory/hbench/.github/workflows/run.yml@main")
    assert codes(sigstore.sign(DIGEST, fork), root) == ["signature-workflow-untrusted"]


def test_the_trusted_workflow_at_another_sha_is_refused(
    sigstore: LocalSigstore, root: Path
) -> None:
    moved = replace(IDENTITY, job_workflow_sha="b" * 40)
    assert codes(sigstore.sign(DIGEST, moved), root) == ["signature-workflow-sha-mismatch"]


def test_another_issuer_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    person = replace(IDENTITY, issuer="https://accounts.google.com")
    assert codes(sigstore.sign(DIGEST, person), root) == ["signature-issuer-mismatch"]


def test_an_expired_certificate_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    assert codes(sigstore.sign(DIGEST, expired=True), root) == ["signature-certificate-expired"]


def test_a_missing_log_entry_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    bundle = sigstore.sign(DIGEST, with_log_entry=False)
    assert codes(bundle, root) == ["signature-log-entry-missing"]


def test_a_log_entry_another_log_signed_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    bundle = sigstore.sign(DIGEST, log_key=sigstore.other().log_key)
    assert codes(bundle, root) == ["signature-invalid"]


def test_a_certificate_from_another_ca_is_refused(sigstore: LocalSigstore, root: Path) -> None:
    """Another instance's bundle, whatever identity it claims, does not chain to the root."""
    assert codes(sigstore.other().sign(DIGEST), root) == ["signature-invalid"]


def test_every_failure_is_named(sigstore: LocalSigstore, root: Path) -> None:
    both = replace(IDENTITY, job_workflow_sha="b" * 40, issuer="https://accounts.google.com")
    other = hashlib.sha256(b"another job").hexdigest()
    assert codes(sigstore.sign(other, both), root) == [
        "signature-issuer-mismatch",
        "signature-workflow-sha-mismatch",
        "signature-digest-mismatch",
    ]


def test_no_trusted_release_trusts_no_signature(sigstore: LocalSigstore, root: Path) -> None:
    with pytest.raises(HbenchError) as refused:
        check_signature(sigstore.sign(DIGEST).encode(), DIGEST, (), root=root)
    assert refused.value.code == "signature-workflow-untrusted"


def test_not_a_bundle_is_refused(root: Path) -> None:
    assert codes('{"mediaType": "text/plain"}', root) == ["signature-bundle-invalid"]
    assert codes("not json", root) == ["signature-bundle-invalid"]


def test_the_public_root_is_read_from_the_package_and_refuses_local_bundles(
    sigstore: LocalSigstore,
) -> None:
    """The default trust root is Sigstore's public one, shipped in sigstore-python: read
    offline, and our local CA is not in it."""
    load_trusted_root()
    with pytest.raises(HbenchError) as refused:
        check_signature(sigstore.sign(DIGEST).encode(), DIGEST, TRUSTED)
    assert refused.value.code == "signature-invalid"


def test_an_unreadable_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "root.json").write_text("{}")
    with pytest.raises(HbenchError) as refused:
        load_trusted_root(tmp_path / "root.json")
    assert refused.value.code == "signature-root-invalid"

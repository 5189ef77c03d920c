"""Signed provenance on upload: the reusable workflow's bundle beside the manifest
(`manifest.sigstore.json`) is checked by sigstore-python's verifier against a trusted root
of our making, kept with the job when it passes, and not kept, with its code in the
`signature` check, when it doesn't; the job is stored either way with the evidence it has."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.auth.service import create_api_token
from app.datarepo.service import rebuild_site
from app.db.models import Account
from app.settings import Settings
from hbench.jobs.manifest import SIGNATURE_NAME, load_manifest
from registry.datarepo import layout
from sitebuild import page
from sitebuild.audit import audit_data_repo
from sitebuild.audit_signatures import SignaturePolicy
from tests.fakes.github import FakeGitHub
from tests.support.sigstore_local import LocalSigstore
from tests.support.sigstore_server import identity_of

from ..bench.conftest import sealed
from ..bench.jobs import SealedJob, packed
from ..conftest import bearer
from ..publish.conftest import write_data_repository
from .test_run_on_ci import CI, RELEASE, RELEASED_AT, ci

__all__ = ["ci", "sealed"]


@pytest.fixture(scope="module")
def local_sigstore() -> LocalSigstore:
    return LocalSigstore()


@pytest.fixture
def github_mode(github_mode: Settings, local_sigstore: LocalSigstore, tmp_path: Path) -> Settings:
    root = local_sigstore.write_trusted_root(tmp_path / "trusted_root.json")
    return github_mode.model_copy(
        update={
            "trusted_workflows": (f"{RELEASE}={RELEASED_AT}",),
            "sigstore_trusted_root": root,
        }
    )


def signed_upload(
    ci: CI, sealed: SealedJob, tmp_path: Path, bundle: str | None, issued: dict[str, Any]
) -> Any:
    job = sealed.copy_to(tmp_path)
    if bundle is not None:
        (job / SIGNATURE_NAME).write_text(bundle)
    headers = {
        "content-type": "application/gzip",
        "hpg-run-token": issued["token"],
        "authorization": f"Bearer {ci.token()}",
    }
    return ci.client.post("/api/bench/uploads", content=packed(job), headers=headers)


def signature_check(answer: Any) -> dict[str, Any]:
    (check,) = [c for c in answer.json()["checks"] if c["rule"] == "signature"]
    return dict(check)


def test_a_bundle_of_the_trusted_workflow_for_the_digest_is_kept(
    ci: CI, sealed: SealedJob, local_sigstore: LocalSigstore, tmp_path: Path
) -> None:
    issued = ci.issued_for(sealed)
    digest = load_manifest(sealed.path).digest
    bundle = local_sigstore.sign(digest, identity_of(ci.token()))
    answer = signed_upload(ci, sealed, tmp_path, bundle, issued)
    assert answer.status_code == 201, answer.text
    assert signature_check(answer)["status"] == "passed"
    assert answer.json()["evidence"] == ["self-reported", "issued", "run-on-ci"]
    (job,) = ci.jobs()
    kept = job.summary["signature"]
    assert kept["digest"] == digest
    assert kept["workflow_ref"] == RELEASE and kept["workflow_sha"] == RELEASED_AT
    assert kept["bundle_json"] == bundle


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("digest", "signature-digest-mismatch"),
        ("workflow", "signature-workflow-untrusted"),
        ("sha", "signature-workflow-sha-mismatch"),
        ("expired", "signature-certificate-expired"),
        ("no-log-entry", "signature-log-entry-missing"),
        ("run", "signature-run-mismatch"),
        ("ca", "signature-invalid"),
    ],
)
def test_a_bad_bundle_is_not_kept_and_the_job_keeps_its_evidence(  # noqa: PLR0917 - fixtures and parameters
    ci: CI,
    sealed: SealedJob,
    local_sigstore: LocalSigstore,
    tmp_path: Path,
    change: str,
    code: str,
) -> None:
    issued = ci.issued_for(sealed)
    digest = load_manifest(sealed.path).digest
    identity = identity_of(ci.token())
    signer = local_sigstore
    if change == "digest":
        digest = "0" * 64
    elif change == "workflow":
        identity = replace(identity, job_workflow_ref="mallory/fork/.github/workflows/x.yml@main")
    elif change == "sha":
        identity = replace(identity, job_workflow_sha="d" * 40)
    elif change == "run":
        identity = replace(identity, run_id=identity.run_id + 1)
    elif change == "ca":
        signer = local_sigstore.other()
    options = {"expired": change == "expired", "with_log_entry": change != "no-log-entry"}
    answer = signed_upload(ci, sealed, tmp_path, signer.sign(digest, identity, **options), issued)
    assert answer.status_code == 201, answer.text
    check = signature_check(answer)
    assert check["status"] == "failed"
    assert f"({code})" in check["note"] or code in check["note"]
    assert answer.json()["evidence"] == ["self-reported", "issued", "run-on-ci"]
    (job,) = ci.jobs()
    assert job.summary.get("signature") is None


def test_an_upload_without_a_bundle_shows_no_signature_check(
    ci: CI, sealed: SealedJob, tmp_path: Path
) -> None:
    issued = ci.issued_for(sealed)
    answer = signed_upload(ci, sealed, tmp_path, None, issued)
    assert answer.status_code == 201, answer.text
    assert "signature" not in {c["rule"] for c in answer.json()["checks"]}


def published_signed_run(
    ci: CI, sealed: SealedJob, local_sigstore: LocalSigstore, tmp_path: Path, settings: Settings
) -> tuple[Path, str, str]:
    """A signed upload published and written to the data repository: the checkout, the
    board and the run's id."""
    issued = ci.issued_for(sealed)
    digest = load_manifest(sealed.path).digest
    bundle = local_sigstore.sign(digest, identity_of(ci.token()))
    answer = signed_upload(ci, sealed, tmp_path, bundle, issued)
    assert answer.status_code == 201, answer.text
    account = ci.db.scalars(select(Account).where(Account.login == "alice")).one()
    _, api_token = create_api_token(ci.db, account, "publishing")
    job_id = answer.json()["id"]
    published = ci.client.post(f"/api/bench/jobs/{job_id}/publish", headers=bearer(api_token))
    assert published.status_code == 200, published.text
    # The writer pushes to a local repository: GitHub's stand-in for the data repository.
    local = settings.model_copy(update={"mode": "local"})
    return write_data_repository(local), published.json()["board"], job_id


def test_a_published_signed_run_keeps_its_bundle_and_the_audit_checks_it_offline(  # noqa: PLR0917 - fixtures
    ci: CI,
    sealed: SealedJob,
    local_sigstore: LocalSigstore,
    tmp_path: Path,
    github_mode: Settings,
    fake: FakeGitHub,
) -> None:
    checkout, board, run_id = published_signed_run(
        ci, sealed, local_sigstore, tmp_path, github_mode
    )
    record_path = checkout / layout.run_file(board, run_id)
    record = json.loads(record_path.read_text())
    signature = record["signature"]
    assert signature["digest"] == record["manifestDigest"]
    assert (signature["workflowRef"], signature["workflowSha"]) == (RELEASE, RELEASED_AT)
    bundle_path = checkout / signature["bundle"]
    assert signature["bundle"] == layout.signature_file(board, run_id)
    assert json.loads(bundle_path.read_text())["mediaType"].startswith(
        "application/vnd.dev.sigstore.bundle"
    )
    policy = SignaturePolicy(github_mode.sigstore_trusted_root, fake.url)
    assert audit_data_repo(checkout, signing=policy).agrees

    # Against Sigstore's public root the local CA's bundle is refused, naming the run.
    public = audit_data_repo(checkout, signing=SignaturePolicy(None, fake.url))
    assert {(d.code, d.item) for d in public.differences} == {("audit-signature-invalid", run_id)}

    # The record's account of the signer held to the bundle's: a changed log index.
    record["signature"]["logIndex"] += 1
    record_path.write_text(json.dumps(record))
    (changed,) = audit_data_repo(checkout, signing=policy).differences
    assert (changed.code, changed.field) == ("audit-signature-invalid", "signature.logIndex")

    # A bundle gone from the repository.
    bundle_path.unlink()
    (missing,) = audit_data_repo(checkout, signing=policy).differences
    assert (missing.code, missing.item) == ("audit-signature-missing", run_id)


def test_the_run_page_shows_who_signed_the_digest(
    ci: CI,
    sealed: SealedJob,
    local_sigstore: LocalSigstore,
    tmp_path: Path,
    github_mode: Settings,
) -> None:
    _, board, run_id = published_signed_run(ci, sealed, local_sigstore, tmp_path, github_mode)
    rebuild_site(github_mode.model_copy(update={"mode": "local"}))
    shown = (github_mode.site_dir / page.run(board, run_id)).read_text()
    assert "Signed provenance" in shown
    for fact in (RELEASE, RELEASED_AT, load_manifest(sealed.path).digest, "sigstore verify"):
        assert fact in shown, fact

"""The upload step's signature: with `sign`, the sealed manifest's digest is signed by
sigstore-python's own signer with the job's OIDC identity, against a Sigstore instance of
our own on loopback (Fulcio and Rekor backed by a local CA and log key), and the bundle,
uploaded beside the manifest, passes sigstore-python's verifier against that instance's
trusted root as the service checks it; a job that can't be signed is uploaded unsigned,
with a warning."""

from __future__ import annotations

import io
import shutil
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import jwt
import pytest

from hbench.jobs.manifest import SIGNATURE_NAME, load_manifest
from hbench.jobs.sealing import seal
from hbench.jobs.verification import verify
from hbench.provenance import TrustedRelease, check_signature
from tests.action.conftest import token_endpoint
from tests.conftest import HarborJobFactory
from tests.hbench.cli.upload_server import upload_server
from tests.support.sigstore_local import GITHUB_ISSUER, LocalSigstore, SigningIdentity
from tests.support.sigstore_server import sigstore_server

from .test_upload_step import JWT, step

pytestmark = pytest.mark.harbor

JOB = SigningIdentity()


@pytest.fixture
def sealed(harbor_job: HarborJobFactory, tmp_path: Path) -> Path:
    job_dir = tmp_path / "sealed" / "sign-step"
    shutil.copytree(harbor_job("sign-step"), job_dir)
    seal(job_dir)
    return job_dir


def actions_token(audience: str) -> str:
    """A GitHub Actions OIDC token of the job, as the runner mints one for `audience`."""
    now = int(time.time())
    claims = {
        "iss": GITHUB_ISSUER, "aud": audience, "sub": f"repo:{JOB.repository}:ref:{JOB.ref}",
        "iat": now, "exp": now + 300, "job_workflow_ref": JOB.job_workflow_ref,
        "job_workflow_sha": JOB.job_workflow_sha, "repository": JOB.repository,
        "sha": JOB.sha, "ref": JOB.ref, "run_id": str(JOB.run_id),
        "run_attempt": str(JOB.run_attempt), "runner_environment": JOB.runner_environment,
    }  # fmt: skip
    return jwt.encode(
        claims, "the runner's signing key, thirty-two bytes or more", algorithm="HS256"
    )


def minting() -> Callable[[str], str]:
    return lambda audience: actions_token(audience) if audience == "sigstore" else JWT


def uploaded_names(body: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        return {Path(m.name).name for m in archive.getmembers()}


def test_the_job_is_signed_and_its_bundle_passes_sigstores_verifier(
    tmp_path: Path, sealed: Path
) -> None:
    local = LocalSigstore()
    with (
        sigstore_server(local) as sigstore,
        upload_server() as server,
        token_endpoint(minting()) as tokens,
    ):
        config = sigstore.write_trust_config(tmp_path / "trust-config.json")
        code, printed = step(
            tmp_path, server, sealed, INPUT_SIGN="true",
            INPUT_SIGSTORE_TRUST_CONFIG=str(config), **tokens.environ(),
        )  # fmt: skip
    assert code == 0, printed
    assert "::warning" not in printed
    assert "sigstore" in tokens.audiences
    assert sigstore.certified == [JOB] and sigstore.logged == 1
    assert SIGNATURE_NAME in uploaded_names(server.received[0].body)
    assert verify(sealed) == []  # the bundle sits beside the manifest, never in it
    signed = check_signature(
        (sealed / SIGNATURE_NAME).read_bytes(),
        load_manifest(sealed).digest,
        [TrustedRelease(JOB.job_workflow_ref, JOB.job_workflow_sha)],
        root=local.write_trusted_root(tmp_path / "trusted-root.json"),
        issuer=GITHUB_ISSUER,
    )
    assert signed.signer.run_url == (
        f"https://github.com/{JOB.repository}/actions/runs/{JOB.run_id}/attempts/1"
    )


def test_a_job_sigstore_does_not_sign_is_uploaded_unsigned_with_a_warning(
    tmp_path: Path, sealed: Path
) -> None:
    with sigstore_server(LocalSigstore()) as sigstore:
        config = sigstore.write_trust_config(tmp_path / "trust-config.json")
    # The instance is gone: nothing answers at its address.
    with upload_server() as server, token_endpoint(minting()) as tokens:
        code, printed = step(
            tmp_path, server, sealed, INPUT_SIGN="true",
            INPUT_SIGSTORE_TRUST_CONFIG=str(config), **tokens.environ(),
        )  # fmt: skip
    assert code == 0, printed
    (warning,) = [line for line in printed.splitlines() if line.startswith("::warning")]
    assert "title=hbench%3A the job is not signed" in warning
    assert "action-sign-failed" in warning and "uploading it unsigned" in warning
    assert SIGNATURE_NAME not in uploaded_names(server.received[0].body)
    assert not (sealed / SIGNATURE_NAME).exists()

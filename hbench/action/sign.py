"""The Action's signature of a sealed job: its manifest's digest, signed with the job's
GitHub Actions OIDC identity as a Sigstore bundle, written beside the manifest as
`manifest.sigstore.json` (`docs/trust.md`, "Signed provenance").

sigstore-python does the signing: a certificate from Fulcio for the OIDC token (audience
`sigstore`), a signature over the digest with its ephemeral key, and the entry in Rekor,
the transparency log, all in the bundle it returns. The Sigstore instance is the public
one (its trust configuration refreshed over TUF), or the one a client trust configuration
file names (`sigstore-trust-config`: a private instance, or the tests' own).

Signing never stops the upload: where there is no OIDC token, or Sigstore can't be
reached or refuses, the step warns and the job is uploaded without a signature, with the
evidence it has.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hbench.action.oidc import id_token_available, request_id_token
from hbench.action.protocol import Actions
from hbench.errors import HbenchError
from hbench.jobs.manifest import SIGNATURE_NAME, load_manifest

SIGSTORE_AUDIENCE = "sigstore"
"""The audience Fulcio takes an OIDC token for."""
UNSIGNED = "hbench: the job is not signed"


def sign_job(
    actions: Actions, job_dir: Path, environ: Mapping[str, str], trust_config: Path | None
) -> bool:
    """Sign the sealed job's manifest digest into `manifest.sigstore.json`; whether it was
    signed. A job without `id-token: write` is not, and says why; so is any failure."""
    if not id_token_available(environ):
        actions.log("no OIDC token to sign the job with (no `id-token: write`): not signed")
        return False
    try:
        digest = load_manifest(job_dir).digest
        token = request_id_token(environ, SIGSTORE_AUDIENCE)
        actions.mask(token)
        bundle = signed_bundle(digest, token, trust_config)
    except HbenchError as error:
        actions.warning(UNSIGNED, f"{error.problems[0].detail}; uploading it unsigned")
        return False
    (job_dir / SIGNATURE_NAME).write_text(bundle, encoding="utf-8")
    actions.log(f"signed the manifest's digest {digest[:16]}… into {SIGNATURE_NAME}")
    return True


def signed_bundle(digest: str, token: str, trust_config: Path | None) -> str:
    """The bundle of `digest` (sha256, hex) signed with the OIDC `token`'s identity;
    `action-sign-failed` with Sigstore's reason when it can't be made."""
    # sigstore-python and its clients load only when a job is signed.
    import requests  # noqa: PLC0415
    from sigstore.errors import Error as SigstoreError  # noqa: PLC0415
    from sigstore.hashes import Hashed  # noqa: PLC0415
    from sigstore.models import ClientTrustConfig  # noqa: PLC0415
    from sigstore.oidc import IdentityToken  # noqa: PLC0415
    from sigstore.sign import SigningContext  # noqa: PLC0415
    from sigstore_models.common.v1 import HashAlgorithm  # noqa: PLC0415

    try:
        if trust_config is None:
            config = ClientTrustConfig.production()
        else:
            config = ClientTrustConfig.from_json(trust_config.read_text(encoding="utf-8"))
        context = SigningContext.from_trust_config(config)
        hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(digest))
        with context.signer(IdentityToken(token)) as signer:
            bundle: str = signer.sign_artifact(hashed).to_json()
    except (SigstoreError, requests.RequestException, OSError, ValueError) as error:
        reason = str(error) or error.__class__.__name__
        raise HbenchError("action-sign-failed", f"Sigstore did not sign it: {reason}") from None
    return bundle

"""A run's signed provenance, as its public record keeps it: who signed which digest.

The reusable workflow signs the sealed manifest's digest with its GitHub Actions OIDC
identity, as a Sigstore bundle (`hbench.provenance`); the service checks the bundle and
the data repository keeps it beside the run (`boards/<board>/signatures/<run>.sigstore.json`),
with this summary in the run's record. What it proves is narrow: the named workflow, at
the named commit, running in the named repository's workflow run, signed this digest,
and the signature is in the transparency log. Nothing about the job beyond its digest.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from registry.schema import Record

SIGNATURE_FORMAT = 1


class RunSignature(Record):
    """The signer of a run's manifest digest, read from the bundle's certificate."""

    format: int = SIGNATURE_FORMAT
    digest: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="The sha256 signed: the manifest's digest."
    )
    issuer: str = Field(description="The OIDC issuer the signing certificate names.")
    workflow_ref: str = Field(
        description="The workflow that signed: OWNER/REPO/.github/workflows/FILE.yml@REF "
        "(the certificate's Build Signer URI, without https://github.com/)."
    )
    workflow_sha: str = Field(description="The commit of that workflow (Build Signer Digest).")
    repository: str | None = Field(
        default=None, description="The repository whose workflow run signed (Source Repository)."
    )
    repository_sha: str | None = Field(default=None, description="That repository's commit.")
    run_url: str | None = Field(
        default=None, description="The workflow run that signed (Run Invocation URI)."
    )
    runner: str | None = Field(default=None, description="`github-hosted` or `self-hosted`.")
    log_index: int = Field(ge=0, description="The entry's index in the transparency log.")
    logged_at: datetime = Field(description="When the transparency log took the entry.")
    bundle: str = Field(
        description="The bundle's path in the data repository, beside the run's file."
    )

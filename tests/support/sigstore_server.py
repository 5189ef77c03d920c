"""A Sigstore instance of our own on loopback, for sigstore-python's signer: Fulcio's
`POST /api/v2/signingCert` and Rekor's `POST /api/v1/log/entries`, backed by a
`LocalSigstore` (its CA issues the certificate, its log key signs the entry), and the
client trust configuration that points sigstore-python at them.

Fulcio here certifies what the OIDC token says, as Fulcio does for a GitHub Actions
token, without checking the token's signature (the tests' runner endpoint mints it);
everything after that, the certificate, its SCT, the log entry and its proofs, is real,
and is checked by sigstore-python's own verifier against the trusted root.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.http_stub import StubHandler, stub_server
from tests.support.sigstore_local import LocalSigstore, SigningIdentity


def identity_of(token: str) -> SigningIdentity:
    """What Fulcio certifies for the GitHub Actions job this OIDC token is of."""
    claims: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return SigningIdentity(
        job_workflow_ref=claims["job_workflow_ref"],
        job_workflow_sha=claims["job_workflow_sha"],
        repository=claims["repository"],
        sha=claims["sha"],
        ref=claims["ref"],
        run_id=int(claims["run_id"]),
        run_attempt=int(claims["run_attempt"]),
        runner_environment=claims["runner_environment"],
        issuer=claims["iss"],
    )


@dataclass
class SigstoreServer:
    """The instance's address, and what it was asked for."""

    url: str
    sigstore: LocalSigstore
    certified: list[SigningIdentity]
    logged: int = 0

    def write_trust_config(self, path: Path) -> Path:
        """A client trust configuration naming this instance's Fulcio and Rekor and the
        trusted root of its keys, as `sigstore --trust-config` reads one."""
        start = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")

        def service(url: str) -> dict[str, Any]:
            return {"url": url, "majorApiVersion": 1, "validFor": {"start": start},
                    "operator": "hbench tests"}  # fmt: skip

        config = {
            "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
            "trustedRoot": self.sigstore.trusted_root(),
            "signingConfig": {
                "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
                "caUrls": [service(self.url)],
                "oidcUrls": [],
                "rekorTlogUrls": [service(self.url)],
                "tsaUrls": [],
                "rekorTlogConfig": {"selector": "ANY"},
                "tsaConfig": {"selector": "ANY"},
            },
        }
        path.write_text(json.dumps(config, indent=2) + "\n")
        return path


@contextmanager
def sigstore_server(sigstore: LocalSigstore) -> Iterator[SigstoreServer]:
    """Serve `sigstore` as Fulcio and Rekor on one loopback port until the block ends."""
    state = SigstoreServer(url="", sigstore=sigstore, certified=[])

    class Handler(StubHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            if self.path == "/api/v2/signingCert":
                self.send_json(200, certify(body, self.headers.get("authorization", "")))
            elif self.path == "/api/v1/log/entries":
                self.send_json(201, log(body))
            else:
                self.send_json(404, {"message": f"no {self.path} here"})

    def certify(body: dict[str, Any], authorization: str) -> dict[str, Any]:
        identity = identity_of(authorization.removeprefix("Bearer "))
        state.certified.append(identity)
        pem = base64.b64decode(body["certificateSigningRequest"])
        public = x509.load_pem_x509_csr(pem).public_key()
        if not isinstance(public, ec.EllipticCurvePublicKey):
            raise TypeError("sigstore-python asks for a certificate of an EC key")
        issued = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
        leaf = sigstore.certificate(identity, public, issued_at=issued)
        chain = [
            c.public_bytes(serialization.Encoding.PEM).decode() for c in (leaf, sigstore.ca_cert)
        ]
        return {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}}

    def log(body: dict[str, Any]) -> dict[str, Any]:
        spec = body["spec"]
        pem = base64.b64decode(spec["signature"]["publicKey"]["content"])
        cert = x509.load_pem_x509_certificate(pem)
        signature = base64.b64decode(spec["signature"]["content"])
        digest = bytes.fromhex(spec["data"]["hash"]["value"])
        now = datetime.now(UTC).replace(microsecond=0)
        entry = sigstore.log_entry(cert, signature, digest, now)
        state.logged += 1
        proof = entry["inclusionProof"]
        return {
            "entry-uuid": {
                "body": entry["canonicalizedBody"],
                "integratedTime": int(entry["integratedTime"]),
                "logID": base64.b64decode(entry["logId"]["keyId"]).hex(),
                "logIndex": int(entry["logIndex"]),
                "verification": {
                    "signedEntryTimestamp": entry["inclusionPromise"]["signedEntryTimestamp"],
                    "inclusionProof": {
                        "logIndex": int(proof["logIndex"]),
                        "rootHash": base64.b64decode(proof["rootHash"]).hex(),
                        "treeSize": int(proof["treeSize"]),
                        "hashes": [base64.b64decode(h).hex() for h in proof["hashes"]],
                        "checkpoint": proof["checkpoint"]["envelope"],
                    },
                },
            }
        }

    with stub_server(Handler) as port:
        state.url = f"http://127.0.0.1:{port}"
        yield state

"""A Sigstore of our own, offline: a Fulcio-shaped CA, a CT log key and a Rekor-shaped log,
and the trusted root that names them, so sigstore-python's own `Verifier` checks bundles
signed here exactly as it checks the public instance's.

A certificate carries what Fulcio puts in one for a GitHub Actions job (Fulcio's
`docs/oid-info.md`): the job's workflow as the SAN URI, the issuer in both encodings, Build
Signer URI and Digest (the workflow and commit that ran), Source Repository URI and Digest
(the calling repository and its commit), the runner's kind and the run's address, and an
embedded SCT from the CT key over the precertificate (RFC 6962, section 3.2). A bundle
(v0.3, a `hashedrekord` 0.0.1 entry, as `sigstore sign` makes) holds the leaf certificate,
the signature over the digest, and a log entry with its inclusion promise and an
inclusion proof whose checkpoint the log key signs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
LOG_URL = "https://rekor.sigstore.invalid"
FULCIO_URL = "https://fulcio.sigstore.invalid"
LOG_ORIGIN = "rekor.sigstore.invalid - 1"
_SCT_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
_FULCIO = "1.3.6.1.4.1.57264.1."


def _oid(n: int) -> ObjectIdentifier:
    return ObjectIdentifier(f"{_FULCIO}{n}")


def _utf8(value: str) -> bytes:
    """A DER UTF8String, as Fulcio encodes its newer extensions (1.8 onwards)."""
    raw = value.encode()
    if len(raw) < 128:
        return b"\x0c" + bytes([len(raw)]) + raw
    size = len(raw).to_bytes((len(raw).bit_length() + 7) // 8, "big")
    return b"\x0c" + bytes([0x80 | len(size)]) + size + raw


def _spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    return hashlib.sha256(_spki(key)).digest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@dataclass(frozen=True)
class SigningIdentity:
    """The claims of a GitHub Actions job's OIDC token that Fulcio copies into its
    certificate, here for a caller of the reusable workflow."""

    job_workflow_ref: str = "hbench/hbench/.github/workflows/run-benchmark.yml@refs/tags/v0.3.0"
    job_workflow_sha: str = "a" * 40
    repository: str = "octo-org/evals"
    sha: str = "c" * 40
    ref: str = "refs/heads/main"
    run_id: int = 4242
    run_attempt: int = 1
    runner_environment: str = "github-hosted"
    event_name: str = "workflow_dispatch"
    issuer: str = GITHUB_ISSUER

    def extensions(self) -> list[tuple[int, bytes]]:
        """Fulcio's OIDC extensions for this identity, by the OID's last arc."""
        github = "https://github.com"
        return [
            (1, self.issuer.encode()),  # the issuer, raw (deprecated, still written)
            (8, _utf8(self.issuer)),
            (9, _utf8(f"{github}/{self.job_workflow_ref}")),  # Build Signer URI
            (10, _utf8(self.job_workflow_sha)),  # Build Signer Digest
            (11, _utf8(self.runner_environment)),
            (12, _utf8(f"{github}/{self.repository}")),  # Source Repository URI
            (13, _utf8(self.sha)),  # Source Repository Digest
            (14, _utf8(self.ref)),
            (18, _utf8(f"{github}/{self.job_workflow_ref}")),  # Build Config URI
            (19, _utf8(self.job_workflow_sha)),
            (20, _utf8(self.event_name)),
            (
                21,
                _utf8(
                    f"{github}/{self.repository}/actions/runs/{self.run_id}"
                    f"/attempts/{self.run_attempt}"
                ),
            ),
        ]


@dataclass
class LocalSigstore:
    """A CA, a CT log key and a transparency log key, and the trusted root naming them."""

    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    ca_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP384R1())
    )
    ct_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    log_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )

    def __post_init__(self) -> None:
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "hbench tests"),
                x509.NameAttribute(NameOID.COMMON_NAME, "local fulcio"),
            ]
        )
        public = self.ca_key.public_key()
        self.ca_cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - timedelta(days=365))
            .not_valid_after(self.now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(self.ca_key, hashes.SHA384())
        )

    # The trusted root.

    def trusted_root(self) -> dict[str, Any]:
        """The trusted root (`application/vnd.dev.sigstore.trustedroot+json;version=0.1`)."""
        start = (self.now - timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")

        def log(url: str, key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
            public = key.public_key()
            return {
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": _b64(_spki(public)),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": {"start": start},
                },
                "logId": {"keyId": _b64(_key_id(public))},
            }

        der = self.ca_cert.public_bytes(serialization.Encoding.DER)
        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(LOG_URL, self.log_key)],
            "certificateAuthorities": [
                {
                    "subject": {"organization": "hbench tests", "commonName": "local fulcio"},
                    "uri": FULCIO_URL,
                    "certChain": {"certificates": [{"rawBytes": _b64(der)}]},
                    "validFor": {"start": start},
                }
            ],
            "ctlogs": [log("https://ctfe.sigstore.invalid", self.ct_key)],
            "timestampAuthorities": [],
        }

    def write_trusted_root(self, path: Path) -> Path:
        path.write_text(json.dumps(self.trusted_root(), indent=2) + "\n")
        return path

    # Certificates.

    def certificate(
        self,
        identity: SigningIdentity,
        key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey,
        *,
        issued_at: datetime,
        lifetime: timedelta = timedelta(minutes=10),
    ) -> x509.Certificate:
        """A Fulcio-shaped leaf for `key` (or its public half), with its SCT embedded."""
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(self.ca_cert.subject)
            .public_key(_public(key))
            .serial_number(x509.random_serial_number())
            .not_valid_before(issued_at)
            .not_valid_after(issued_at + lifetime)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(_public(key)), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                critical=False,
            )
            .add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.UniformResourceIdentifier(
                            f"https://github.com/{identity.job_workflow_ref}"
                        )
                    ]
                ),
                critical=True,
            )
        )
        for arc, value in identity.extensions():
            builder = builder.add_extension(x509.UnrecognizedExtension(_oid(arc), value), False)
        precert = builder.sign(self.ca_key, hashes.SHA384())
        sct = self._sct(precert.tbs_certificate_bytes, issued_at)
        return builder.add_extension(x509.UnrecognizedExtension(_SCT_OID, sct), False).sign(
            self.ca_key, hashes.SHA384()
        )

    def _sct(self, tbs: bytes, at: datetime) -> bytes:
        """The SCT list extension's value: one v1 precertificate SCT from the CT key."""
        millis = int(at.timestamp() * 1000)
        issuer_key_id = _key_id(self.ca_key.public_key())
        signed = (
            struct.pack("!BBQH", 0, 0, millis, 1)
            + issuer_key_id
            + len(tbs).to_bytes(3, "big")
            + tbs
            + struct.pack("!H", 0)
        )
        signature = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        sct = (
            struct.pack("!B", 0)
            + _key_id(self.ct_key.public_key())
            + struct.pack("!QH", millis, 0)
            + struct.pack("!BBH", 4, 3, len(signature))
            + signature
        )
        listed = struct.pack("!H", len(sct)) + sct
        inner = struct.pack("!H", len(listed)) + listed
        return b"\x04" + _der_length(len(inner)) + inner

    # Bundles.

    def sign(
        self,
        digest: str,
        identity: SigningIdentity | None = None,
        *,
        at: datetime | None = None,
        expired: bool = False,
        with_log_entry: bool = True,
        log_key: ec.EllipticCurvePrivateKey | None = None,
    ) -> str:
        """A bundle signing the sha256 `digest` (hex) as `identity`, at `at` (now by
        default). `expired`: the certificate ran out before the log took the entry.
        `with_log_entry=False` leaves the log entry out; `log_key` signs the entry with
        another key than the trusted root's."""
        identity = identity or SigningIdentity()
        moment = (at or self.now).replace(microsecond=0)
        key = ec.generate_private_key(ec.SECP256R1())
        issued = moment - timedelta(minutes=30) if expired else moment - timedelta(seconds=5)
        cert = self.certificate(identity, key, issued_at=issued)
        raw_digest = bytes.fromhex(digest)
        signature = key.sign(raw_digest, ec.ECDSA(_prehashed()))
        entries = (
            [self._log_entry(cert, signature, raw_digest, moment, log_key or self.log_key)]
            if with_log_entry
            else []
        )
        bundle = {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))},
                "tlogEntries": entries,
            },
            "messageSignature": {
                "messageDigest": {"algorithm": "SHA2_256", "digest": _b64(raw_digest)},
                "signature": _b64(signature),
            },
        }
        return json.dumps(bundle, indent=2)

    def log_entry(
        self, cert: x509.Certificate, signature: bytes, digest: bytes, at: datetime
    ) -> dict[str, Any]:
        """The log's entry for a signature over `digest` by `cert`'s key, taken at `at`."""
        return self._log_entry(cert, signature, digest, at, self.log_key)

    def _log_entry(
        self,
        cert: x509.Certificate,
        signature: bytes,
        digest: bytes,
        at: datetime,
        log_key: ec.EllipticCurvePrivateKey,
    ) -> dict[str, Any]:
        """A one-entry log's entry: body, inclusion promise, and a proof to a signed root."""
        pem = cert.public_bytes(serialization.Encoding.PEM)
        body = rfc8785.dumps(
            {
                "apiVersion": "0.0.1",
                "kind": "hashedrekord",
                "spec": {
                    "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                    "signature": {"content": _b64(signature), "publicKey": {"content": _b64(pem)}},
                },
            }
        )
        log_id = _key_id(self.log_key.public_key())
        integrated = int(at.timestamp())
        promise = rfc8785.dumps(
            {
                "body": _b64(body),
                "integratedTime": integrated,
                "logID": log_id.hex(),
                "logIndex": 0,
            }
        )
        root = hashlib.sha256(b"\x00" + body).digest()
        note = f"{LOG_ORIGIN}\n1\n{_b64(root)}\n"
        note_signature = log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        name = LOG_ORIGIN.split(maxsplit=1)[0]
        checkpoint = f"{note}\n\u2014 {name} {_b64(log_id[:4] + note_signature)}\n"
        return {
            "logIndex": "0",
            "logId": {"keyId": _b64(log_id)},
            "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
            "integratedTime": str(integrated),
            "inclusionPromise": {
                "signedEntryTimestamp": _b64(log_key.sign(promise, ec.ECDSA(hashes.SHA256())))
            },
            "inclusionProof": {
                "logIndex": "0",
                "rootHash": _b64(root),
                "treeSize": "1",
                "hashes": [],
                "checkpoint": {"envelope": checkpoint},
            },
            "canonicalizedBody": _b64(body),
        }

    def other(self) -> LocalSigstore:
        """Another instance with its own keys: what it signs, this root does not trust."""
        return LocalSigstore(now=self.now)


def _public(
    key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey,
) -> ec.EllipticCurvePublicKey:
    return key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key


def _prehashed() -> Prehashed:
    return Prehashed(hashes.SHA256())


def _der_length(n: int) -> bytes:
    if n < 128:
        return bytes([n])
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(size)]) + size

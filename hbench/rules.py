"""The catalogue of rule codes: every refusal in hbench ends with one of these.

Each code is explained once, in `docs/rule-codes.md` (what it means, how to fix
it); `tests/test_docs.py` fails when this set and that page disagree.
"""

from __future__ import annotations

DOCS_PAGE = "docs/rule-codes.md"

RULE_CODES: frozenset[str] = frozenset(
    {
        # Reading a Harbor job folder.
        "job-not-found",
        "job-not-harbor",
        "job-json-invalid",
        "job-result-missing",
        "trial-result-missing",
        "job-unfinished",
        "job-incomplete",
        # The manifest ("seal").
        "manifest-missing",
        "manifest-invalid",
        "manifest-file-missing",
        "manifest-file-extra",
        "manifest-file-changed",
        "hbench-version-too-old",
        # Packing and uploading from the client.
        "pack-unsafe-file",
        "pack-too-large",
        "upload-token-missing",
        "upload-unreachable",
        "upload-refused",
        # Running Harbor from a spec.
        "spec-invalid",
        "spec-flag-refused",
        "harbor-missing",
        "harbor-failed",
        "sandbox-unavailable",
    }
)


def docs_link(code: str) -> str:
    """Where a code is explained, as a path inside the repository."""
    return f"{DOCS_PAGE}#{code}"

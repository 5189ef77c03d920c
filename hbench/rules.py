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
        "job-trials-extra",
        "trial-cancelled",
        "trial-job-mismatch",
        # The manifest ("seal").
        "manifest-missing",
        "manifest-invalid",
        "manifest-file-missing",
        "manifest-file-extra",
        "manifest-file-changed",
        "hbench-version-too-old",
        "job-unsafe-file",
        # Packing and uploading from the client.
        "pack-unsafe-file",
        "pack-too-large",
        "pack-output-inside-job",
        "upload-token-missing",
        "upload-unreachable",
        "upload-refused",
        # Running Harbor from a spec.
        "spec-invalid",
        "spec-flag-refused",
        "harbor-missing",
        "harbor-failed",
        "sandbox-unavailable",
        # The service: settings, requests and accounts.
        "settings-invalid",
        "settings-missing",
        "settings-placeholder-secret",
        "request-invalid",
        "endpoint-not-found",
        "method-not-allowed",
        "internal-error",
        "service-unavailable",
        "auth-required",
        "token-invalid",
        "token-revoked",
        "token-not-found",
        "session-required",
        "account-denied",
        # Upload archives: reading the body safely (app/uploads/archive.py).
        "upload-too-large",
        "upload-unpacked-too-large",
        "upload-too-many-files",
        "upload-too-deep",
        "upload-not-gzip",
        "upload-corrupt",
        "upload-truncated",
        "upload-trailing-data",
        "archive-malformed",
        "archive-unsafe-path",
        "archive-path-too-long",
        "archive-link",
        "archive-special-file",
        "archive-duplicate-name",
        "archive-several-jobs",
        "archive-outside-job",
        "archive-empty",
        # The registry, boards and the data repository (registry/).
        "registry-not-found",
        "registry-json-invalid",
        "registry-schema-invalid",
        "registry-empty",
        "registry-slug-mismatch",
        "registry-duplicate-slug",
        "registry-duplicate-model-name",
        "registry-unknown-benchmark",
        "registry-unknown-task-set",
        "registry-unknown-model",
        "registry-unknown-task",
        "registry-task-count-mismatch",
        "registry-board-not-runnable",
        "registry-export-invalid",
        "registry-benchmark-not-found",
        "board-local-tasks",
        "board-attempts-refused",
        "board-prompt-needs-issued-run",
        "board-environment-refused",
        "board-dataset-unpinned",
        "datarepo-board-unknown",
        "datarepo-run-not-found",
        "datarepo-conflict",
    }
)


def docs_link(code: str) -> str:
    """Where a code is explained, as a path inside the repository."""
    return f"{DOCS_PAGE}#{code}"

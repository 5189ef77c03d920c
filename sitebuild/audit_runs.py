"""The checks `hbench audit` makes of each published run's record, from the checkout alone.

A run's record must agree with itself (its file's place, its rewards with its attempts and
trials, its status fields), and each evidence field must come with what it needs
(`docs/trust.md`): *run on CI* only for a run issued from GitHub Actions on a runner
GitHub hosts, by the reusable workflow; *issued* only where its board counts an issued run
of the entry; *regraded* only with the regrade's outcome and no note of failure; *tasks
pinned* only when the task digests it recorded are the ones the registry pins. The audit
log must hold a line for each of its publishing, withdrawal, take-down and deletion.
Every check returns every difference it finds, never the first alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

from pydantic import JsonValue

from registry.datarepo import layout
from registry.datarepo.models import AuditEvent, IssuedRuns, PublishedRun, PushedRun
from registry.schema import Benchmark
from sitebuild.audit_diff import Difference

SHA256 = re.compile(r"^[0-9a-f]{64}$")


def run_differences(
    path: str, run: PublishedRun, benchmark: Benchmark | None
) -> Iterator[Difference]:
    """What is wrong with one run's record on its own."""
    yield from _placement(path, run)
    yield from _results(path, run)
    yield from _status(path, run)
    yield from _evidence(path, run, benchmark)


def issued_differences(
    board: str, runs: Sequence[PublishedRun], issued: IssuedRuns
) -> Iterator[Difference]:
    """Each entry with more issued runs on the board than `issued.json` counts for it:
    an issued run is counted when it is uploaded, before it can be published."""
    per_entry = Counter(run.entry.key for run in runs if run.issued)
    for key, n in sorted(per_entry.items()):
        counted = len(issued.entries.get(key, []))
        if n > counted:
            yield Difference(
                "audit-evidence-inconsistent", layout.issued_file(board), "issued",
                counted, n, board=board, item=key,
                note=f"{n} of its runs say issued, but issued.json counts {counted} "
                "issued runs for the entry",
            )  # fmt: skip


def log_differences(
    runs: Iterable[tuple[str, PublishedRun]], events: Sequence[AuditEvent]
) -> Iterator[Difference]:
    """Each run whose publishing, withdrawal, take-down or deletion the audit log lacks."""
    seen = {(e.board, e.run, e.action) for e in events}
    reasons = {(e.board, e.run): e.reason for e in events if e.action == "take_down"}
    for path, run in runs:
        needed = ["publish"]
        if run.status == "withdrawn":
            needed.append("withdraw")
        if run.status == "taken_down":
            needed.append("take_down")
        if run.files_deleted_at is not None:
            needed.append("delete_files")
        for action in needed:
            if (run.board, run.id, action) not in seen:
                yield Difference(
                    "audit-log-missing", path, "audit", None, action, board=run.board,
                    item=run.id, note=f"the audit log has no {action} line for the run",
                )  # fmt: skip
        reason = reasons.get((run.board, run.id))
        if run.status == "taken_down" and reason is not None and reason != run.take_down_reason:
            yield Difference(
                "audit-log-missing", path, "takeDownReason", run.take_down_reason, reason,
                board=run.board, item=run.id,
                note=f"the run says taken down for {run.take_down_reason}, the audit log "
                f"for {reason}",
            )  # fmt: skip


def pushed_log_differences(
    pushed: Iterable[tuple[str, PushedRun]], events: Sequence[AuditEvent]
) -> Iterator[Difference]:
    """Each pushed run taken down whose take-down the audit log lacks, or gives another
    reason for (a pushed run is on no board: its line names none)."""
    reasons = {e.run: e.reason for e in events if e.action == "take_down" and e.board is None}
    for path, run in pushed:
        if run.status != "taken_down":
            continue
        if run.id not in reasons:
            yield Difference(
                "audit-log-missing", path, "audit", None, "take_down", item=run.id,
                note="the audit log has no take_down line for the pushed run",
            )  # fmt: skip
        elif reasons[run.id] != run.take_down_reason:
            yield Difference(
                "audit-log-missing", path, "takeDownReason", run.take_down_reason,
                reasons[run.id], item=run.id,
                note=f"the pushed run says taken down for {run.take_down_reason}, the audit "
                f"log for {reasons[run.id]}",
            )  # fmt: skip


def _placement(path: str, run: PublishedRun) -> Iterator[Difference]:
    board = layout.board_of_path(path)
    stem = path.rsplit("/", 1)[-1].removesuffix(".json")
    if run.board != board:
        yield _inconsistent(path, run, "board", run.board, board, "its file is on another board")
    if run.id != stem:
        yield _inconsistent(path, run, "id", run.id, stem, "its file bears another id")


def _results(path: str, run: PublishedRun) -> Iterator[Difference]:
    for task, rewards in sorted(run.results.items()):
        if len(rewards) != run.n_attempts:
            yield _inconsistent(
                path, run, f"results.{task}", len(rewards), run.n_attempts,
                f"{len(rewards)} rewards for {run.n_attempts} attempts",
            )  # fmt: skip
    if run.trials:
        trials = Counter(t.task for t in run.trials)
        counts = {task: len(r) for task, r in run.results.items()}
        if dict(trials) != counts:
            yield _inconsistent(
                path, run, "trials", dict(sorted(trials.items())), dict(sorted(counts.items())),
                "its trials are not the trials its results reward",
            )  # fmt: skip
    if run.task_digests and set(run.task_digests) != set(run.results):
        yield _inconsistent(
            path, run, "taskDigests", sorted(run.task_digests), sorted(run.results),
            "its task digests are not for the tasks its results reward",
        )  # fmt: skip
    digest = run.manifest_digest
    if digest is not None and not SHA256.match(digest):
        yield Difference(
            "audit-digest-differs", path, "manifestDigest", digest, None, board=run.board,
            item=run.id, note=f"{digest!r} is not a sha256 digest of a manifest",
        )  # fmt: skip


def _status(path: str, run: PublishedRun) -> Iterator[Difference]:
    public = run.status == "public"
    if public and run.status_changed_at is not None:
        yield _inconsistent(path, run, "statusChangedAt", str(run.status_changed_at), None,
                            "a public run's status never changed")  # fmt: skip
    if not public and run.status_changed_at is None:
        yield _inconsistent(path, run, "statusChangedAt", None, run.status,
                            f"{run.status}, but not when")  # fmt: skip
    if (run.status == "taken_down") != (run.take_down_reason is not None):
        yield _inconsistent(path, run, "takeDownReason", run.take_down_reason, None,
                            "a reason goes with a take-down, and only with one")  # fmt: skip
    if run.files_deleted_at is not None and run.download is not None:
        yield _inconsistent(path, run, "download", run.download, None,
                            "its files were deleted, yet it offers a download")  # fmt: skip


def _evidence(path: str, run: PublishedRun, benchmark: Benchmark | None) -> Iterator[Difference]:
    provenance, evidence = run.provenance, run.evidence
    claims = (provenance.repository, provenance.commit)
    if provenance.kind == "actions" and not all(claims):
        yield _evidence_problem(path, run, "provenance", "from GitHub Actions without the "
                                "verified repository and commit")  # fmt: skip
    if provenance.kind == "local" and any((*claims, provenance.workflow, provenance.runner)):
        yield _evidence_problem(path, run, "provenance", "local, yet with Actions claims")
    if evidence is None:
        return
    if evidence.ci:
        yield from _ci(path, run)
    if not evidence.consistent:
        yield _evidence_problem(path, run, "evidence.consistent", "its files disagreed, which "
                                "no upload is let through with")  # fmt: skip
    if evidence.regrade == "agreed" and evidence.regrade_note is not None:
        yield _evidence_problem(path, run, "evidence.regradeNote", "regraded, yet with a note "
                                "of why it could not be")  # fmt: skip
    if evidence.regrade != "agreed" and not evidence.regrade_note:
        yield _evidence_problem(path, run, "evidence.regradeNote",
                                f"{evidence.regrade}, without the reason")  # fmt: skip
    if evidence.tasks_pinned:
        yield from _pinned(path, run, benchmark)


def _ci(path: str, run: PublishedRun) -> Iterator[Difference]:
    provenance = run.provenance
    needs = {
        "issued": run.issued,
        "provenance.kind": provenance.kind == "actions",
        "provenance.runner": provenance.runner == "github-hosted",
        "provenance.jobWorkflowRef": bool(provenance.job_workflow_ref),
    }
    for field, held in needs.items():
        if not held:
            yield _evidence_problem(
                path,
                run,
                field,
                "run on CI, yet not issued from GitHub "
                "Actions by the reusable workflow on a GitHub-hosted runner",
            )


def _pinned(path: str, run: PublishedRun, benchmark: Benchmark | None) -> Iterator[Difference]:
    pins: Mapping[str, str] = (benchmark.harbor.task_digests or {}) if benchmark else {}
    if not pins:
        yield _evidence_problem(path, run, "evidence.tasksPinned", "tasks pinned, on a board "
                                "whose benchmark pins no task digests")  # fmt: skip
        return
    if not run.task_digests:
        return  # recorded before the task digests were kept: nothing to hold it to
    wrong = sorted(t for t in run.results if run.task_digests.get(t) != pins.get(t))
    if wrong:
        yield _evidence_problem(path, run, "taskDigests", "tasks pinned, yet the digests of "
                                f"{', '.join(wrong)} are not the registry's pins")  # fmt: skip


def _inconsistent(  # noqa: PLR0917 - a private helper; each call names what it found
    path: str, run: PublishedRun, field: str, held: object, other: object, note: str
) -> Difference:
    return Difference(
        "audit-run-inconsistent", path, field, _json(held), _json(other), board=run.board,
        item=run.id, note=note,
    )  # fmt: skip


def _evidence_problem(path: str, run: PublishedRun, field: str, note: str) -> Difference:
    return Difference(
        "audit-evidence-inconsistent", path, field, None, None, board=run.board, item=run.id,
        note=note,
    )  # fmt: skip


def _json(value: object) -> JsonValue:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, dict):
        return {str(k): int(v) for k, v in value.items()}
    return str(value)

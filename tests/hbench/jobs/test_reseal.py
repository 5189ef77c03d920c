"""Resuming a sealed job: Harbor's own changes pass the seal check, any other change is refused.

The exemptions are held to a real `harbor job resume` of a sealed demo job: every file
it changes, adds or deletes must be one `check_resumable` lets through.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hbench.errors import HbenchError, Problem
from hbench.jobs.manifest import MANIFEST_NAME, Manifest, ManifestFile
from hbench.jobs.reseal import APPENDED, REWRITTEN, check_resumable, resume_problems
from hbench.jobs.sealing import seal
from tests.conftest import HarborJobFactory, run_harbor
from tests.hbench.jobs.test_manifest import files_on_disk
from tests.hbench.jobs.test_manifest import sealed as sealed  # noqa: PLC0414 - a fixture, by name

harbor = pytest.mark.harbor
SHA_A, SHA_B = "a" * 64, "b" * 64


@pytest.fixture(scope="module")
def demo_job(harbor_job: HarborJobFactory) -> Path:
    return harbor_job("reseal-demo")


def trial(job: Path, task: str) -> Path:
    (folder,) = job.glob(f"{task}__*")
    return folder


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=4))


def refusal(job: Path) -> list[Problem]:
    with pytest.raises(HbenchError) as refused:
        check_resumable(job)
    return list(refused.value.problems)


def refused_paths(job: Path) -> list[str | None]:
    """The paths a refusal names, after its summary; every problem is `resume-seal-broken`."""
    summary, *problems = refusal(job)
    assert summary.code == "resume-seal-broken"
    assert "Harbor was not started" in summary.message
    assert {p.code for p in problems} == {"resume-seal-broken"}
    return [p.path for p in problems]


def top(path: str) -> str | None:
    head, sep, _ = path.partition("/")
    return head if sep else None


@harbor
@pytest.mark.parametrize("stopped", [False, True], ids=["finished", "trial-stopped"])
def test_a_real_resume_changes_only_what_the_check_allows(sealed: Path, stopped: bool) -> None:
    job = sealed
    if stopped:
        # Seal the job while one trial has no result, as if it was stopped mid-trial:
        # Harbor's resume deletes that folder and runs the trial again under a new name.
        (trial(job, "hello-file") / "result.json").unlink()
        seal(job)
    before = files_on_disk(job)
    check_resumable(job)

    run_harbor(job.parent, "job", "resume", "-p", str(job))

    after = files_on_disk(job)
    changed = {p for p in before.keys() & after.keys() if before[p] != after[p]}
    appeared, vanished = after.keys() - before.keys(), before.keys() - after.keys()
    assert "result.json" in changed  # the resume did run
    assert changed <= REWRITTEN | APPENDED
    assert all(after[p].startswith(before[p]) for p in changed & APPENDED)
    sealed_folders = {top(p) for p in before}
    assert all(top(p) not in sealed_folders | {None} for p in appeared)
    assert all(top(p) not in {top(q) for q in after} | {None} for p in vanished)
    assert all(f"{top(p)}/result.json" not in before for p in vanished)
    if stopped:
        assert appeared and vanished
        assert "job.log" in changed
    # What the resume left (as a resume stopped at its end would) passes the check.
    check_resumable(job)


@harbor
def test_an_untouched_sealed_job_and_an_unsealed_one_may_resume(
    sealed: Path, demo_job: Path, tmp_path: Path
) -> None:
    check_resumable(sealed)
    unsealed = tmp_path / "unsealed"
    shutil.copytree(demo_job, unsealed)
    (trial(unsealed, "prime-factor") / "verifier" / "reward.txt").write_text("1")
    check_resumable(unsealed)  # no manifest: nothing to hold it to


@harbor
def test_a_forged_reward_is_refused(sealed: Path) -> None:
    failed = trial(sealed, "prime-factor")
    assert (failed / "verifier" / "reward.txt").read_text().strip() == "0"
    (failed / "verifier" / "reward.txt").write_text("1")
    edit_json(failed / "result.json", lambda d: d["verifier_result"]["rewards"].update(reward=1.0))

    paths = refused_paths(sealed)

    assert paths == [f"{failed.name}/result.json", f"{failed.name}/verifier/reward.txt"]
    problems = refusal(sealed)
    assert "changed since the job was sealed" in problems[1].message
    assert "Run the benchmark again, or upload the job as it was sealed" in problems[0].message


@harbor
def test_a_deleted_trial_folder_is_refused(sealed: Path) -> None:
    gone = trial(sealed, "sum-numbers")
    listed = sorted(p.relative_to(sealed).as_posix() for p in gone.rglob("*") if p.is_file())
    shutil.rmtree(gone)

    assert refused_paths(sealed) == listed
    assert all("is not in the job folder" in p.message for p in refusal(sealed)[1:])


@harbor
def test_a_file_added_to_a_sealed_trial_or_the_top_is_refused(sealed: Path) -> None:
    kept = trial(sealed, "hello-file")
    (kept / "agent" / "notes.txt").write_text("added")
    (sealed / "extra.json").write_text("{}")

    assert refused_paths(sealed) == ["extra.json", f"{kept.name}/agent/notes.txt"]


@harbor
def test_a_new_trial_folder_and_harbors_rewrites_pass(sealed: Path) -> None:
    new = sealed / "hello-file__NewName"
    shutil.copytree(trial(sealed, "hello-file"), new)
    edit_json(sealed / "result.json", lambda d: d.update(finished_at=None))
    edit_json(sealed / "config.json", lambda d: d.update(n_concurrent_trials=2))
    (sealed / "lock.json").write_text((sealed / "lock.json").read_text() + "\n")
    with (sealed / "job.log").open("a") as log:
        log.write("Resuming\n")

    check_resumable(sealed)


@harbor
def test_job_log_may_only_grow_by_appending(sealed: Path) -> None:
    log = sealed / "job.log"
    text = log.read_bytes()
    assert text
    log.write_bytes(b"X" + text[1:] + b"more\n")
    assert refused_paths(sealed) == ["job.log"]
    assert "no longer begins with the" in refusal(sealed)[1].message
    log.write_bytes(text[:-1])
    assert refused_paths(sealed) == ["job.log"]
    log.write_bytes(text)
    check_resumable(sealed)


@harbor
def test_a_result_naming_another_job_is_refused(sealed: Path) -> None:
    edit_json(sealed / "result.json", lambda d: d.update(id="00000000-0000-0000-0000-000000000000"))

    (problem,) = refusal(sealed)[1:]

    assert problem.code == "resume-seal-broken"
    assert "but result.json has id 00000000-" in problem.message


@harbor
def test_a_damaged_manifest_or_a_link_is_refused(sealed: Path) -> None:
    (trial(sealed, "hello-file") / "link").symlink_to("/etc/passwd")
    assert [p.code for p in refusal(sealed)] == ["resume-seal-broken", "job-unsafe-file"]
    (sealed / MANIFEST_NAME).write_text("{}")
    assert [p.code for p in refusal(sealed)] == ["manifest-invalid"]


def manifest(*paths: str) -> Manifest:
    files = [ManifestFile(path=p, size=3, sha256=SHA_A) for p in sorted(paths)]
    return Manifest(
        format=1, hbench_version="0.3.0", harbor_version="0.25.0", job_id="j", spec_digest=None,
        files=files,
    )  # fmt: skip


SEALED = manifest(
    "config.json", "job.log", "lock.json", "result.json",
    "t__1/result.json", "t__1/trial.log", "u__2/trial.log", "w__4/agent/result.json",
)  # fmt: skip
SAME = {f.path: (f.size, f.sha256) for f in SEALED.files}


@pytest.mark.parametrize(
    ("change", "heads", "refused"),
    [
        ({}, {}, []),
        ({"config.json": (9, SHA_B), "result.json": (3, SHA_B)}, {}, []),
        ({"job.log": (9, SHA_B)}, {"job.log": SHA_A}, []),
        ({"job.log": (9, SHA_B)}, {"job.log": SHA_B}, ["job.log"]),
        ({"job.log": (3, SHA_B)}, {}, ["job.log"]),
        ({"t__1/trial.log": (3, SHA_B)}, {}, ["t__1/trial.log"]),
        ({"v__3/result.json": (3, SHA_B), "v__3/a/b.txt": (1, SHA_B)}, {}, []),
        ({"t__1/extra.txt": (3, SHA_B)}, {}, ["t__1/extra.txt"]),
        ({"extra.txt": (3, SHA_B)}, {}, ["extra.txt"]),
    ],
)
def test_which_differences_harbor_makes(
    change: dict[str, tuple[int, str]], heads: dict[str, str], refused: list[str]
) -> None:
    problems = resume_problems(SEALED, {**SAME, **change}, heads)

    assert [p.path for p in problems] == refused
    assert {p.code for p in problems} <= {"resume-seal-broken"}


@pytest.mark.parametrize(
    ("removed", "refused"),
    [
        # A folder with no sealed result.json may vanish whole; Harbor deletes such folders.
        (["u__2/trial.log"], []),
        (["w__4/agent/result.json"], []),  # only the trial's own result.json counts
        # One with a sealed result.json may not, nor may part of a folder go.
        (["t__1/result.json", "t__1/trial.log"], ["t__1/result.json", "t__1/trial.log"]),
        (["t__1/trial.log"], ["t__1/trial.log"]),
        # Harbor rewrites the job's own files, but never deletes them.
        (["lock.json", "job.log"], ["job.log", "lock.json"]),
    ],
)
def test_which_files_may_vanish(removed: list[str], refused: list[str]) -> None:
    observed = {path: seen for path, seen in SAME.items() if path not in removed}

    assert [p.path for p in resume_problems(SEALED, observed, {})] == refused

"""`hbench run` and `hbench jobs resume` on real Harbor jobs of the demo dataset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hbench.demo import demo_spec
from hbench.digest import spec_digest
from registry.demo import task_names
from tests.hbench.cli.helpers import hbench, write_spec

pytestmark = pytest.mark.harbor


@pytest.fixture(scope="module")
def sealed_run(tmp_path_factory: pytest.TempPathFactory, demo_registry: Path) -> Path:
    """A folder holding spec.json and the job `hbench run` ran and sealed from it, in
    jobs/resumed; tests copy the whole folder before changing it."""
    folder = tmp_path_factory.mktemp("sealed-run")
    spec_path = write_spec(folder, demo_spec(demo_registry, "resumed"))
    ran = hbench("run", "-c", str(spec_path), cwd=folder)
    assert ran.returncode == 0, ran.stderr
    return folder


def files_of(job: Path) -> dict[str, bytes]:
    return {p.relative_to(job).as_posix(): p.read_bytes() for p in job.rglob("*") if p.is_file()}


def test_run_seals_a_job_that_verifies(tmp_path: Path, demo_registry: Path) -> None:
    spec = demo_spec(demo_registry, "oracle-run", n_attempts=2)
    spec_path = write_spec(tmp_path, spec)

    ran = hbench("run", "--config", str(spec_path), "--jobs-dir", "out", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr

    job = tmp_path / "out" / "oracle-run"
    manifest = json.loads((job / "manifest.json").read_text())
    assert manifest["spec_digest"] == spec_digest(spec)
    assert manifest["job_id"] == json.loads((job / "result.json").read_text())["id"]
    assert manifest["harbor_version"].startswith("0.25")
    listed = {entry["path"] for entry in manifest["files"]}
    assert "result.json" in listed and "manifest.json" not in listed

    checked = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "sealed, finished and complete" in checked.stdout
    # Four of the five demo tasks pass for the oracle, twice each.
    assert "0.800" in checked.stdout


def test_run_with_the_nop_agent_and_max_retries(tmp_path: Path, demo_registry: Path) -> None:
    spec_path = write_spec(tmp_path, demo_spec(demo_registry, "nop-run", agent="nop"))

    ran = hbench("run", "-c", str(spec_path), "--max-retries", "2", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr

    job = tmp_path / "jobs" / "nop-run"
    config = json.loads((job / "config.json").read_text())
    assert config["retry"]["max_retries"] == 2
    checked = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "0.000" in checked.stdout


@pytest.mark.parametrize(
    "extra", [["--n-attempts", "3"], ["-k", "3"], ["--timeout-multiplier", "2"], ["--yes"]]
)
def test_run_refuses_flags_that_change_the_spec(
    tmp_path: Path, demo_registry: Path, extra: list[str]
) -> None:
    spec_path = write_spec(tmp_path, demo_spec(demo_registry, "refused"))

    ran = hbench("run", "--config", str(spec_path), *extra, cwd=tmp_path)

    assert ran.returncode == 1
    assert "(spec-flag-refused)" in ran.stderr
    assert "--jobs-dir and --max-retries" in ran.stderr
    assert not (tmp_path / "jobs").exists()


@pytest.mark.parametrize("content", ["not json", "[1, 2]", None])
def test_run_refuses_a_spec_that_is_not_a_job_config(tmp_path: Path, content: str | None) -> None:
    spec_path = tmp_path / "spec.json"
    if content is not None:
        spec_path.write_text(content)

    ran = hbench("run", "--config", str(spec_path), cwd=tmp_path)

    assert ran.returncode == 1
    assert "(spec-invalid)" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_resume_finishes_a_job_stopped_before_it_was_sealed_and_seals_it_with_its_spec(
    tmp_path: Path, sealed_run: Path
) -> None:
    shutil.copytree(sealed_run, tmp_path, dirs_exist_ok=True)
    job = tmp_path / "jobs" / "resumed"
    spec = json.loads((tmp_path / "spec.json").read_text())
    assert (job / "hbench-spec.json").read_bytes() == (tmp_path / "spec.json").read_bytes()
    # Stop it the way a crash would, before hbench sealed it: no manifest, one trial
    # without its result, one whose result was cut off while Harbor wrote it, and no
    # finished_at.
    (job / "manifest.json").unlink()
    trial = next(p for p in job.iterdir() if p.name.startswith("hello-file__"))
    (trial / "result.json").unlink()
    cut_off = next(p for p in job.iterdir() if p.name.startswith("count-lines__"))
    (cut_off / "result.json").write_bytes((cut_off / "result.json").read_bytes()[:40])
    result = json.loads((job / "result.json").read_text())
    (job / "result.json").write_text(json.dumps({**result, "finished_at": None}, indent=4))

    broken = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert broken.returncode == 1
    assert "(manifest-missing)" in broken.stderr
    # The cut-off result makes the folder unreadable as a job, and says how to fix it.
    assert "(job-json-invalid)" in broken.stderr
    assert f"`hbench jobs resume -p {job}`, which deletes the folder" in broken.stderr

    resumed = hbench("jobs", "resume", "-p", str(job), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"deleted the trial {cut_off.name}: its result.json was cut off" in resumed.stderr

    checked = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    manifest = json.loads((job / "manifest.json").read_text())
    # No --config and no previous manifest: the digest is the recorded spec's.
    assert manifest["spec_digest"] == spec_digest(spec)
    assert "hbench-spec.json" in {entry["path"] for entry in manifest["files"]}
    trials = sorted(p.name.split("__")[0] for p in job.iterdir() if p.is_dir())
    assert trials == sorted(task_names())  # each once: the reruns took the old ones' places
    assert not trial.exists() and not cut_off.exists()


def test_resume_and_run_refuse_a_sealed_job_changed_since_and_start_nothing(
    tmp_path: Path, sealed_run: Path
) -> None:
    shutil.copytree(sealed_run, tmp_path, dirs_exist_ok=True)
    job = tmp_path / "jobs" / "resumed"
    # The forgery: a failed trial's reward set to 1, in its reward file and its result.
    failed = next(job.glob("prime-factor__*"))
    (failed / "verifier" / "reward.txt").write_text("1")
    result = json.loads((failed / "result.json").read_text())
    result["verifier_result"]["rewards"]["reward"] = 1.0
    (failed / "result.json").write_text(json.dumps(result, indent=4))
    before = files_of(job)

    for command in (["jobs", "resume", "-p", str(job)], ["run", "-c", "spec.json"]):
        refused = hbench(*command, cwd=tmp_path)

        assert refused.returncode == 1, refused.stdout
        said = " ".join(refused.stderr.split())  # as printed, without the console's wrapping
        assert "Harbor was not started" in said
        for changed in ("verifier/reward.txt", "result.json"):
            assert f"{failed.name}/{changed} changed since the job was sealed" in said
        assert said.count("(resume-seal-broken)") == 3
        assert "Run the benchmark again, or upload the job as it was sealed" in said
        assert files_of(job) == before  # Harbor rewrites result.json whenever it starts

    checked = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert checked.returncode == 1
    assert checked.stderr.count("(manifest-file-changed)") == 2


def test_run_refuses_a_job_folder_started_from_another_spec(
    tmp_path: Path, sealed_run: Path
) -> None:
    shutil.copytree(sealed_run, tmp_path, dirs_exist_ok=True)
    job = tmp_path / "jobs" / "resumed"
    spec = json.loads((tmp_path / "spec.json").read_text())
    other = write_spec(tmp_path / "jobs", {**spec, "n_attempts": 2})
    before = files_of(job)

    refused = hbench("run", "-c", str(other), cwd=tmp_path)

    assert refused.returncode == 1
    said = " ".join(refused.stderr.split())
    assert "(spec-folder-taken)" in said
    assert f"started from spec {spec_digest(spec)[:12]}…" in said
    assert files_of(job) == before


def test_resume_refuses_a_folder_that_is_not_a_job(tmp_path: Path) -> None:
    (tmp_path / "not-a-job").mkdir()
    resumed = hbench("jobs", "resume", "-p", "not-a-job", cwd=tmp_path)
    assert resumed.returncode == 1
    assert "(job-not-harbor)" in resumed.stderr


def test_harbor_refusing_the_spec_is_reported(tmp_path: Path, demo_registry: Path) -> None:
    spec = demo_spec(demo_registry, "missing-dataset")
    spec["datasets"] = [{"name": "no-such-dataset", "version": "9", "registry_path": "nowhere"}]
    spec_path = write_spec(tmp_path, spec)

    ran = hbench("run", "-c", str(spec_path), cwd=tmp_path)

    assert ran.returncode == 1
    assert "(harbor-failed)" in ran.stderr

"""`hbench run` and `hbench jobs resume` on real Harbor jobs of the demo dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbench.demo import demo_spec, task_names
from hbench.digest import spec_digest
from tests.hbench.cli.helpers import hbench, write_spec

pytestmark = pytest.mark.harbor


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


def test_resume_finishes_a_stopped_job_and_seals_it_again(
    tmp_path: Path, demo_registry: Path
) -> None:
    spec = demo_spec(demo_registry, "resumed")
    spec_path = write_spec(tmp_path, spec)
    assert hbench("run", "-c", str(spec_path), cwd=tmp_path).returncode == 0
    job = tmp_path / "jobs" / "resumed"
    # Stop it the way a crash would: one trial loses its result.
    trial = next(p for p in job.iterdir() if p.name.startswith("hello-file__"))
    (trial / "result.json").unlink()

    broken = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert broken.returncode == 1
    assert "(manifest-file-missing)" in broken.stderr
    assert "(trial-result-missing)" in broken.stderr or "(job-incomplete)" in broken.stderr

    resumed = hbench("jobs", "resume", "-p", str(job), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr

    checked = hbench("jobs", "verify", "-p", str(job), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    manifest = json.loads((job / "manifest.json").read_text())
    assert manifest["spec_digest"] == spec_digest(spec)
    trials = {p.name.split("__")[0] for p in job.iterdir() if p.is_dir()}
    assert trials == set(task_names())


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

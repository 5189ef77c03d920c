"""`hbench registry run` and `hbench push` on real Harbor jobs of pulled HumanEval tasks, run
in the bubblewrap sandbox: the oracle at 100, the summary and its checks, the oracle gate,
a broken task, `--summarize-only`, and a registry dataset run by its name."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from registry.pull.manifest import ORACLE_RECORD
from tests.hbench.cli.helpers import hbench

pytestmark = pytest.mark.harbor

SUMMARY = "hbench-run-summary.json"
NOWHERE = "http://127.0.0.1:9"
TASKS = 12


def run(cwd: Path, *args: str) -> Path:
    """`hbench registry run` in the sandbox; the job folder it names."""
    done = hbench("registry", "run", *args, "--env", "sandbox", "-n", "4", cwd=cwd)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("Push it: hbench push "))
    return cwd / Path(line.removeprefix("Push it: hbench push ")).parent


@pytest.fixture(scope="module")
def pulled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `humaneval/` (12 pulled tasks) and `jobs/` with the oracle's run
    over them and a later nop run; tests copy the whole folder before changing it."""
    root = tmp_path_factory.mktemp("registry-run")
    done = hbench("registry", "pull", "humaneval", "--n", str(TASKS), "--seed", "11", cwd=root)
    assert done.returncode == 0, done.stderr
    run(root, "humaneval", "-a", "oracle", "--job-name", "oracle")
    run(root, "humaneval", "-a", "nop", "--job-name", "nop")
    return root


@pytest.fixture
def work(tmp_path: Path, pulled: Path) -> Path:
    shutil.copytree(pulled, tmp_path, dirs_exist_ok=True, symlinks=True)
    # The jobs name the pulled folder by its absolute path: point this copy's at this copy.
    for config in (tmp_path / "jobs").glob("*/config.json"):
        config.write_text(config.read_text().replace(str(pulled), str(tmp_path)))
    return tmp_path


def load(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def test_the_oracle_scores_100_on_pulled_humaneval_tasks(pulled: Path) -> None:
    job = pulled / "jobs" / "oracle"
    summary = load(job / SUMMARY)
    rewards = summary.pop("taskRewards")
    assert summary == {
        "benchmarkSlug": "humaneval", "model": "none", "harness": "oracle",
        "taskCount": TASKS, "nAttempts": 1, "score": 100.0, "metric": "pass@1",
        "tokensUsed": None, "costUsd": None, "harborVersion": summary["harborVersion"],
        "cliVersion": summary["cliVersion"],
        "resultsHash": hashlib.sha256((job / "result.json").read_bytes()).hexdigest(),
        "notes": None,
    }  # fmt: skip
    assert isinstance(rewards, list) and len(rewards) == TASKS
    assert {r["reward"] for r in rewards} == {1.0}
    oracle = load(pulled / "humaneval" / ORACLE_RECORD)
    assert oracle["score"] == 100.0 and oracle["failing"] == []
    config = load(job / "config.json")
    assert config["datasets"] == [{"path": str(pulled / "humaneval")}]


def test_a_real_run_after_the_oracle_passed_is_pushed_and_push_alone_finds_it(
    work: Path,
) -> None:
    nop = load(work / "jobs" / "nop" / SUMMARY)
    assert nop["score"] == 0.0 and nop["harness"] == "nop" and nop["model"] == "none"

    shown = hbench("push", "--dry-run", "--notes", "nop; defaults", "--url", NOWHERE, cwd=work)
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert body == {**nop, "notes": "nop; defaults"}


def test_an_edited_summary_is_refused_and_nothing_is_pushed(work: Path) -> None:
    summary = work / "jobs" / "nop" / SUMMARY
    original = load(summary)
    summary.write_text(json.dumps({**original, "score": 75.0}))
    edited = hbench("push", str(summary), "--url", NOWHERE, cwd=work)
    assert edited.returncode == 1
    assert "(push-summary-edited)" in edited.stderr and "score" in edited.stderr

    summary.write_text(json.dumps({**original, "resultsHash": "0" * 64}))
    rehashed = hbench("push", str(summary), "--url", NOWHERE, cwd=work)
    assert rehashed.returncode == 1
    assert "(push-results-hash-mismatch)" in rehashed.stderr
    assert "push-unreachable" not in edited.stderr + rehashed.stderr


def test_summarize_only_rebuilds_the_summary_of_a_job(work: Path) -> None:
    summary = work / "jobs" / "nop" / SUMMARY
    before = summary.read_bytes()
    summary.write_text("{}")
    rebuilt = hbench("registry", "run", "jobs/nop", "--summarize-only", cwd=work)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(summary.read_bytes()) == json.loads(before)


def test_runs_over_tasks_the_oracle_never_passed_are_not_pushed(work: Path) -> None:
    (work / "humaneval" / ORACLE_RECORD).unlink()
    refused = hbench("push", "jobs/nop", "--dry-run", cwd=work)
    assert refused.returncode == 1
    assert "(push-oracle-not-passed)" in refused.stderr
    assert "-a oracle" in refused.stderr


def test_a_broken_task_fails_the_oracle_which_lists_it_and_blocks_the_push(work: Path) -> None:
    task = sorted((work / "humaneval").glob("humaneval-*"))[3]
    expected = task / "tests" / "expected.json"
    broken = {**load(expected), "tests": "def check(candidate):\n    assert False\n"}
    expected.write_text(json.dumps(broken))

    failed = hbench(
        "registry", "run", "humaneval", "-a", "oracle", "--env", "sandbox", "--job-name",
        "oracle-2", cwd=work,
    )  # fmt: skip
    assert failed.returncode == 1
    assert f"failing: {task.name}" in failed.stderr
    assert "(registry-oracle-failed)" in failed.stderr
    oracle = load(work / "humaneval" / ORACLE_RECORD)
    assert oracle["failing"] == [task.name]
    assert oracle["score"] == pytest.approx(100 * (TASKS - 1) / TASKS)

    for job in ("oracle-2", "nop"):
        refused = hbench("push", f"jobs/{job}", "--dry-run", cwd=work)
        assert refused.returncode == 1
        assert "(push-oracle-not-passed)" in refused.stderr
        assert task.name in refused.stderr


def test_tasks_changed_after_the_oracle_ran_need_it_again(work: Path) -> None:
    instruction = sorted((work / "humaneval").glob("humaneval-*"))[0] / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nAlso print hello.\n")
    refused = hbench("push", "jobs/nop", "--dry-run", cwd=work)
    assert refused.returncode == 1
    assert "(push-oracle-not-passed)" in refused.stderr
    assert "changed since the oracle ran" in refused.stderr


def test_a_registry_dataset_runs_by_name_and_maps_to_its_benchmark(tmp_path: Path) -> None:
    ran = hbench(
        "registry", "run", "hbench-demo@1.0", "-a", "oracle", "--env", "sandbox",
        "--job-name", "demo", cwd=tmp_path,
    )  # fmt: skip
    # The demo's oracle fails prime-factor on purpose.
    assert ran.returncode == 1
    assert "failing: prime-factor" in ran.stderr
    summary = load(tmp_path / "jobs" / "demo" / SUMMARY)
    assert summary["benchmarkSlug"] == "hbench-demo" and summary["score"] == 80.0
    shown = hbench("push", "jobs/demo", "--dry-run", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["benchmarkSlug"] == "hbench-demo"


def test_a_target_that_is_no_tasks_is_refused(tmp_path: Path) -> None:
    for target in ("humaneval", "nothing@1.0", "."):
        refused = hbench("registry", "run", target, "-a", "oracle", cwd=tmp_path)
        assert refused.returncode == 1, target
        assert "(registry-run-target-invalid)" in refused.stderr, target
    hint = hbench("registry", "run", "humaneval", "-a", "oracle", cwd=tmp_path)
    assert "hbench registry pull humaneval" in hint.stderr

"""Task digests pinned per benchmark version: the demo's pins are its bundled tasks as Harbor
hashes them, the maintainer command writes them, and a job of edited tasks fits no board."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from hbench.cli.main import app as hbench_app
from hbench.jobs.facts import facts_from_job
from hbench.jobs.reader import read_job
from hbench.jobs.task_digest import dataset_digests
from registry.demo import TASKS_DIR
from registry.loader import load_registry
from registry.placement import place
from tests.conftest import HarborJobFactory

from .helpers import DEMO_PINS, copy_default_registry, demo_facts

runner = CliRunner()


def test_the_demo_pins_are_its_bundled_tasks_as_harbor_hashes_them() -> None:
    """Fails when a demo task changes without its pins: run the command the message gives."""
    assert dataset_digests(TASKS_DIR) == DEMO_PINS, (
        "the demo's tasks changed: pin them again with `hbench registry pin hbench-demo "
        "--tasks registry/demo/tasks --registry registry/data --from "
        '"the tasks shipped in registry/demo/tasks, hbench 0.3.0"`'
    )


def test_the_pins_are_the_digests_a_real_job_records(harbor_job: HarborJobFactory) -> None:
    job = read_job(harbor_job("oracle-k2", "-k", "2"))
    assert {t.task_name: t.task_digest for t in job.results} == DEMO_PINS


def test_the_command_pins_a_benchmark_from_a_dataset_checkout(tmp_path: Path) -> None:
    registry = copy_default_registry(tmp_path / "registry")
    target = registry / "benchmarks" / "hbench-demo.json"
    data = json.loads(target.read_text())
    del data["harbor"]["taskDigests"], data["harbor"]["pinnedFrom"]
    target.write_text(json.dumps(data))
    assert load_registry(registry).benchmarks["hbench-demo"].harbor.task_digests is None

    argv = ["registry", "pin", "hbench-demo", "--tasks", str(TASKS_DIR),
            "--registry", str(registry), "--from", "the bundled demo tasks"]  # fmt: skip
    result = runner.invoke(hbench_app, argv)
    assert result.exit_code == 0, result.output
    assert "pinned 5 task digests" in result.output
    harbor = load_registry(registry).benchmarks["hbench-demo"].harbor
    assert harbor.task_digests == DEMO_PINS
    assert harbor.pinned_from == "the bundled demo tasks"
    again = target.read_text()
    assert runner.invoke(hbench_app, argv).exit_code == 0
    assert target.read_text() == again, "pinning the same files again changes nothing"


def test_the_command_refuses_tasks_that_are_not_the_benchmarks(tmp_path: Path) -> None:
    registry = copy_default_registry(tmp_path / "registry")
    before = (registry / "benchmarks" / "hbench-demo.json").read_text()
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR, tasks)
    shutil.rmtree(tasks / "prime-factor")
    result = runner.invoke(
        hbench_app,
        ["registry", "pin", "hbench-demo", "--tasks", str(tasks), "--registry", str(registry),
         "--from", "a partial copy"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "(registry-pin-invalid)" in result.output
    assert "missing prime-factor" in result.output
    assert (registry / "benchmarks" / "hbench-demo.json").read_text() == before


def test_softened_tests_keep_the_job_off_every_demo_board(softened_job: Path) -> None:
    job = read_job(softened_job)
    assert job.score == 1.0
    facts = facts_from_job(job)
    placement = place(facts, load_registry())
    assert placement.fits == () and placement.opens is None
    (problem,) = placement.problems
    assert problem.code == "task-digest-mismatch"
    assert "prime-factor" in problem.message
    assert "count-lines" not in problem.message, "only the edited task is named"
    # The same job with the demo's own files fits both of its boards' cells as before.
    honest = place(demo_facts(), load_registry())
    assert honest.fits == ("hbench-demo",)

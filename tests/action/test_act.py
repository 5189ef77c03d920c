"""The Action on another runner: nektos `act` runs the root Action in a caller's own job,
end to end against the real service, with the quick demo board's two tasks run for real in
Harbor's docker environment (tests/action/act.py says what stands in for GitHub; the
reusable workflow's run is tests/action/test_act_reusable.py, a file of its own so the two
runs go to two test workers). `image` is left empty: the run step runs this version's
runner image, which the runner has, and builds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.act import ActRun, act_run

pytestmark = pytest.mark.docker


def assert_ran_with_the_release_image(ran: ActRun, image: str) -> None:
    assert ran.returncode == 0, ran.log[-6000:]
    assert f"using the runner image {image}, which this runner has already" in ran.log
    assert "building the runner image" not in ran.log
    assert ran.outputs["score"] == "1.0000"  # the quick board's two tasks both pass
    assert ran.outputs["submission"].startswith("oracle-")


def test_act_runs_the_action_in_a_callers_own_job(tmp_path: Path, release_image: str) -> None:
    ran, _ = act_run(tmp_path, "action.yml")

    assert_ran_with_the_release_image(ran, release_image)
    assert ran.outputs["evidence"].split() == ["self-reported", "issued", "run-on-ci"]
    assert "Success - Main Issue, run and upload" not in ran.log  # the root action's steps:
    for step in ("Issue the run", "Run it in the hbench runner image", "Upload the job"):
        assert f"Success - Main {step}" in ran.log, step

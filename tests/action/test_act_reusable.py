"""The reusable workflow on another runner: nektos `act` runs a caller of it end to end
against the real service, the workflow finding and checking out its own code at its own
commit, with the quick demo board's two tasks run for real in Harbor's docker environment
(tests/action/act.py says what stands in for GitHub). `image` is left empty: the run step
runs this version's runner image, which the runner has, and builds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.action.act import act_run
from tests.action.conftest import WORKFLOW

pytestmark = pytest.mark.docker


MATRIX_NOT_DECODED = (
    "Error while evaluating matrix: Invalid JSON: invalid character '$' looking for "
    "beginning of value"
)
"""act 0.2.89 decodes the matrix of a job whose needed job was skipped without evaluating
its expression (the sharded `shard` job, skipped with `issue` when `shards` is 1), and
stops the workflow there; GitHub skips such a job without reading its matrix. Everything
the unsharded run does runs before it."""


def test_act_runs_the_reusable_workflow_at_its_own_commit(
    tmp_path: Path, release_image: str
) -> None:
    ran, sha = act_run(tmp_path, "reusable.yml")

    # The run job, whole: its own code found and checked out, then issue, run and upload.
    job = "run-benchmark/Run the benchmark"
    assert f"[hbench/hbench {job}    ] 🏁  Job succeeded" in ran.log, ran.log[-6000:]
    for step in ("Find this workflow's own repository and commit",
                 "Check out this workflow's own code, at that commit", "Issue the run",
                 "Run it in the hbench runner image", "Upload the job"):  # fmt: skip
        assert f"Success - Main {step}" in ran.log, step
    # The first step read the workflow's own commit from the job's OIDC token, and the
    # stand-in checkout took exactly that commit of the release's repository.
    assert f"this job runs {WORKFLOW} at {sha}" in ran.log
    assert f"checked out hbench/hbench at {sha} into .hbench-action" in ran.log
    assert f"using the runner image {release_image}, which this runner has already" in ran.log
    assert "building the runner image" not in ran.log
    outputs = ran.set_outputs(job)
    assert outputs["score"] == "1.0000"
    assert outputs["evidence"].split() == ["self-reported", "issued", "run-on-ci"]
    assert "Main Save the run for a resume" not in ran.log  # it ran no save: nothing failed
    # Then act stops at the skipped sharded jobs, and only there.
    assert ran.returncode == 1
    assert MATRIX_NOT_DECODED in ran.log
    assert "Job failed" not in ran.log

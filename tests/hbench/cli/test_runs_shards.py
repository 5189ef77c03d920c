"""`hbench runs issue --shards 3` against the real service: a folder per shard, each run by
`hbench run` with real Harbor in the sandbox and uploaded with its own token, as printed;
the third upload forms the run's one job on Your bench."""

from __future__ import annotations

import json
import stat
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from app.auth.tokens import hash_token
from app.db.models import IssuedRun, IssuedRunStatus, Job
from app.db.summary import JobSummary
from tests.hbench.cli.helpers import hbench
from tests.hbench.cli.test_runs import Running, printed, shell, sqlite_service, work

__all__ = ["sqlite_service", "work"]


@pytest.mark.harbor
def test_a_sharded_demo_run_is_issued_run_and_uploaded_shard_by_shard(
    sqlite_service: Running, work: Path
) -> None:
    service = sqlite_service
    issued = hbench(
        "runs", "issue", "--url", service.url, "--board", "hbench-demo", "--agent", "oracle",
        "--sandbox", "--shards", "3", cwd=work,
    )  # fmt: skip

    assert issued.returncode == 0, issued.stderr
    (run_dir,) = (work / "runs").iterdir()
    details = json.loads((run_dir / "run.json").read_text())
    assert not (run_dir / "run-token").exists()  # the run's own token is never shown
    assert [shard["index"] for shard in details["shards"]] == [1, 2, 3]
    assert "in 3 shards" in issued.stdout
    run_lines = [line.strip() for line in issued.stdout.splitlines() if "hbench run" in line]
    upload_lines = [line.strip() for line in issued.stdout.splitlines() if "HPG_RUN_TOKEN=" in line]
    assert len(run_lines) == len(upload_lines) == 3

    for shard, run_line, upload_line in zip(
        details["shards"], run_lines, upload_lines, strict=True
    ):
        folder = run_dir / f"shard-{shard['index']}"
        token_file = folder / "run-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert service.run(shard["run_id"]).token_hash == hash_token(token_file.read_text().strip())
        spec = json.loads((folder / "spec.json").read_text())
        assert spec["datasets"][0]["task_names"] == shard["tasks"]
        where = f"runs/{run_dir.name}/shard-{shard['index']}"
        assert run_line == f"cd {where} && HARBOR_TELEMETRY=0 hbench run --config spec.json"
        ran = shell(run_line, cwd=work)
        assert ran.returncode == 0, ran.stderr
        sent = shell(upload_line, cwd=folder)
        assert sent.returncode == 0, sent.stderr + sent.stdout

    with service.database.session() as session:
        run = session.get(IssuedRun, uuid.UUID(details["run_id"]))
        assert run is not None and run.status is IssuedRunStatus.UPLOADED
        (merged,) = session.scalars(select(Job).where(Job.issued_run_id == run.id))
        summary = JobSummary.of(merged)
    assert summary.task_names == sorted(t for s in details["shards"] for t in s["tasks"])
    assert [s.index for s in summary.shards] == [1, 2, 3]
    assert printed(issued.stdout, "shard 1 (").startswith("shard 1 (count-lines")

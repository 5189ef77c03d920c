"""`hbench runs issue|list|abandon` against the real service, on SQLite and PostgreSQL.

The service runs in this process on a loopback port (local mode: the local user is
signed in from this machine); the client runs as the `hbench` command. The demo run the
service issues is then run by `hbench run` with real Harbor in the bubblewrap sandbox,
and one such run is killed part way, resumed and uploaded with its run token.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.auth.service import create_api_token, ensure_account
from app.auth.tokens import hash_token, is_run_token
from app.db.models import IssuedRun, IssuedRunStatus
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from hbench.digest import spec_digest
from tests.app.conftest import NO_REGRADES, database_url, migrated_database_url  # noqa: F401 - both databases
from tests.hbench.cli.helpers import HBENCH, hbench
from tests.hbench.cli.service import serving
from tests.hbench.cli.upload_server import upload_server

BIN = str(Path(sys.executable).parent)
KILL_TRIES = 5
"""Issued runs to try killing mid-run: the oracle's trials take a fraction of a second, so
a run may finish between two looks at its folder."""
STARTUP_SECONDS = 120.0


@dataclass(frozen=True)
class Running:
    """The service under test: its base URL, and its database for the test to look into."""

    url: str
    database: Database

    def count(self) -> int:
        with self.database.session() as session:
            return session.scalar(select(func.count()).select_from(IssuedRun)) or 0

    def run(self, run_id: str) -> IssuedRun:
        with self.database.session() as session:
            run = session.get(IssuedRun, uuid.UUID(run_id))
            assert run is not None
            return run

    def api_token(self, login: str) -> str:
        with self.database.session() as session:
            _, token = create_api_token(session, ensure_account(session, login), "cli test")
            return token


@contextmanager
def running(settings: Settings) -> Iterator[Running]:
    database = Database(settings.effective_database_url)
    try:
        with serving(create_app(settings)) as url:
            yield Running(url, database)
    finally:
        database.dispose()


@pytest.fixture
def service(tmp_path: Path, database_url: str) -> Iterator[Running]:  # noqa: F811 - the fixture
    """The service on each database in turn."""
    settings = Settings(
        mode="local", state_dir=tmp_path / "state", database_url=database_url, **NO_REGRADES
    )
    with running(settings) as service:
        yield service


@pytest.fixture
def sqlite_service(tmp_path: Path) -> Iterator[Running]:
    """The service on its default database, a SQLite file in its state directory: for
    tests of what the client and Harbor do with a spec, which no database changes."""
    with running(Settings(mode="local", state_dir=tmp_path / "state", **NO_REGRADES)) as service:
        yield service


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The folder the person runs the client in."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a printed command line as a person pastes it into a POSIX shell."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        ["/bin/sh", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip


def printed(output: str, start: str) -> str:
    """The one printed line that starts with `start` (indentation aside)."""
    (line,) = [line.strip() for line in output.splitlines() if line.strip().startswith(start)]
    return line


@pytest.mark.harbor
def test_a_demo_run_is_issued_run_and_uploaded_with_the_printed_commands(
    service: Running, work: Path
) -> None:
    issued = hbench(
        "runs", "issue", "--url", service.url, "--board", "hbench-demo", "--agent", "oracle",
        "--sandbox", "--hardware", "cpu=test machine", cwd=work,
    )  # fmt: skip

    assert issued.returncode == 0, issued.stderr
    (run_dir,) = (work / "runs").iterdir()
    details = json.loads((run_dir / "run.json").read_text())
    job = details["job_name"]
    assert run_dir.name == job
    token_file = run_dir / "run-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    assert is_run_token(token)
    assert token not in issued.stdout + issued.stderr
    assert "token" not in details
    assert not (run_dir / "prompt.j2").exists()
    spec = json.loads((run_dir / "spec.json").read_text())
    row = service.run(details["run_id"])
    assert row.spec == spec
    assert row.spec_digest == spec_digest(spec) == details["spec_digest"]
    assert row.token_hash == hash_token(token)
    assert row.provenance == {"hardware": {"cpu": "test machine"}}

    run_line = printed(issued.stdout, "cd ")
    assert run_line == f"cd runs/{job} && HARBOR_TELEMETRY=0 hbench run --config spec.json"
    ran = shell(run_line, cwd=work)
    assert ran.returncode == 0, ran.stderr
    manifest = json.loads((run_dir / "jobs" / job / "manifest.json").read_text())
    assert manifest["spec_digest"] == row.spec_digest

    # The upload command reads the token from its file; sent to a stand-in endpoint, the
    # header carries exactly that token.
    # Pasted after the run command, in the run's folder where its `cd` left the shell.
    upload_line = printed(issued.stdout, "export HPG_RUN_TOKEN=")
    assert f"--url {service.url}/api/bench/uploads" in upload_line
    assert upload_line.endswith(f" jobs/{job}")
    with upload_server() as server:
        sent = shell(upload_line.replace(f"{service.url}/api/bench/uploads", server.url), run_dir)
    assert sent.returncode == 0, sent.stderr
    (request,) = server.received
    assert request.headers["hpg-run-token"] == token
    assert token not in sent.stdout + sent.stderr


def killed_mid_run(run_dir: Path, job_dir: Path) -> bool:
    """Run `hbench run --config spec.json` in `run_dir` and SIGKILL it, Harbor and all, once
    the first trial folder appears; False when the run had finished first."""
    process = subprocess.Popen(
        [HBENCH, "run", "--config", "spec.json"], cwd=run_dir, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "HARBOR_TELEMETRY": "0"},
    )  # fmt: skip
    deadline = time.monotonic() + STARTUP_SECONDS
    try:
        while not (job_dir.is_dir() and any(p.is_dir() for p in job_dir.iterdir())):
            if process.poll() is not None:
                pytest.fail(f"hbench run exited with {process.returncode} before any trial")
            if time.monotonic() > deadline:
                pytest.fail(f"no trial started in {job_dir} within {STARTUP_SECONDS:.0f} s")
            time.sleep(0.005)
    finally:
        if process.poll() is None:  # not reaped, so its group id is still its own
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # hbench, Harbor and the sandboxes
        process.wait(timeout=STARTUP_SECONDS)
    finished = json.loads((job_dir / "result.json").read_text())["finished_at"] is not None
    return not finished and not (job_dir / "manifest.json").exists()


@pytest.mark.harbor
def test_an_issued_run_killed_mid_run_resumed_and_uploaded_is_accepted(
    sqlite_service: Running, work: Path
) -> None:
    service = sqlite_service
    for _ in range(KILL_TRIES):
        issued = hbench(
            "runs", "issue", "--url", service.url, "--board", "hbench-demo", "--agent", "oracle",
            "--sandbox", cwd=work,
        )  # fmt: skip
        assert issued.returncode == 0, issued.stderr
        run_dir = work / printed(issued.stdout, "cd ").split()[1]  # runs/<job>
        details = json.loads((run_dir / "run.json").read_text())
        job, run_id = details["job_name"], details["run_id"]
        if killed_mid_run(run_dir, run_dir / "jobs" / job):
            break
        # It finished before the kill: give its slot back and try a new run.
        abandoned = hbench("runs", "abandon", run_id, "--url", service.url, cwd=work)
        assert abandoned.returncode == 0, abandoned.stderr
    else:
        pytest.fail(f"each of {KILL_TRIES} demo runs finished before it could be killed")
    job_dir = run_dir / "jobs" / job
    spec = json.loads((run_dir / "spec.json").read_text())
    assert (job_dir / "hbench-spec.json").read_bytes() == (run_dir / "spec.json").read_bytes()
    stopped = hbench("jobs", "verify", "-p", f"jobs/{job}", cwd=run_dir)
    assert stopped.returncode == 1
    assert "(manifest-missing)" in stopped.stderr
    assert "(job-unfinished)" in stopped.stderr

    resumed = hbench("jobs", "resume", "-p", f"jobs/{job}", cwd=run_dir)
    assert resumed.returncode == 0, resumed.stderr
    manifest = json.loads((job_dir / "manifest.json").read_text())
    assert manifest["spec_digest"] == spec_digest(spec) == service.run(run_id).spec_digest

    sent = shell(printed(issued.stdout, "export HPG_RUN_TOKEN="), cwd=run_dir)

    assert sent.returncode == 0, sent.stderr
    answer = json.loads(sent.stdout)
    assert answer["issued_run_id"] == run_id
    assert service.run(run_id).status is IssuedRunStatus.UPLOADED
    checks = {check["rule"]: check["status"] for check in answer["checks"]}
    assert checks["spec-matches"] == checks["spec-digest-matches"] == "passed"
    # Every rule passed, but the two an issued run leaves to spec-matches (where it runs,
    # and with which prompt).
    assert {rule for rule, status in checks.items() if status != "passed"} == {
        "environment-allowed",
        "prompt-needs-issued-run",
    }, checks
    assert checks["environment-allowed"] == checks["prompt-needs-issued-run"] == "skipped"


@pytest.mark.harbor
def test_the_specs_concurrency_runs_and_uploads_and_another_is_refused(
    sqlite_service: Running, work: Path
) -> None:
    service = sqlite_service
    issue = ["runs", "issue", "--url", service.url, "--board", "hbench-demo", "--agent", "oracle"]
    issued = hbench(*issue, "--sandbox", "--concurrent-trials", "2", cwd=work)
    assert issued.returncode == 0, issued.stderr
    assert "2 at once" in issued.stdout
    run_dir = work / printed(issued.stdout, "cd ").split()[1]
    spec = json.loads((run_dir / "spec.json").read_text())
    assert spec["n_concurrent_trials"] == 2
    details = json.loads((run_dir / "run.json").read_text())
    assert details["execution"]["n_concurrent_trials"] == 2
    job_dir = run_dir / "jobs" / details["job_name"]

    # hbench run takes no flag that would change it.
    flagged = hbench("run", "--config", "spec.json", "-n", "4", cwd=run_dir)
    assert flagged.returncode == 1
    assert "(spec-flag-refused)" in flagged.stderr
    assert not job_dir.exists()

    ran = shell(printed(issued.stdout, "cd "), cwd=work)
    assert ran.returncode == 0, ran.stderr
    assert json.loads((job_dir / "config.json").read_text())["n_concurrent_trials"] == 2
    sent = shell(printed(issued.stdout, "export HPG_RUN_TOKEN="), cwd=run_dir)
    assert sent.returncode == 0, sent.stderr
    checks = {check["rule"]: check["status"] for check in json.loads(sent.stdout)["checks"]}
    assert checks["spec-matches"] == checks["spec-digest-matches"] == "passed"
    assert service.run(details["run_id"]).status is IssuedRunStatus.UPLOADED

    # A run of the default spec whose concurrency was changed on this machine is refused.
    other = hbench(*issue, "--sandbox", "--dir", "edited", cwd=work)
    assert other.returncode == 0, other.stderr
    edited = work / "edited"
    changed = {**json.loads((edited / "spec.json").read_text()), "n_concurrent_trials": 3}
    (edited / "spec.json").write_text(json.dumps(changed))
    assert hbench("run", "--config", "spec.json", cwd=edited).returncode == 0
    refused = shell(printed(other.stdout, "export HPG_RUN_TOKEN="), cwd=edited)
    assert refused.returncode == 1
    assert "n_concurrent_trials is 3 in the job, 4 in the spec" in refused.stderr
    assert "(local-spec-mismatch)" in refused.stderr
    other_id = json.loads((edited / "run.json").read_text())["run_id"]
    assert service.run(other_id).status is IssuedRunStatus.ISSUED


@pytest.mark.harbor
def test_a_template_and_instructions_are_written_beside_the_spec_and_run(
    sqlite_service: Running, work: Path
) -> None:
    service = sqlite_service
    template = "Read carefully.\n{{ instruction }}\n"
    (work / "my-template.txt").write_text(template)

    issued = hbench(
        "runs", "issue", "--url", service.url, "--board", "hbench-demo-quick", "--sandbox",
        "--agent", "oracle", "--kwargs", '{"seed": 3}', "--prompt-template", "my-template.txt",
        "--extra-instruction", "Be brief.", "--dir", "my-run", cwd=work,
    )  # fmt: skip

    assert issued.returncode == 0, issued.stderr
    run_dir = work / "my-run"
    assert (run_dir / "prompt.j2").read_text() == template
    spec = json.loads((run_dir / "spec.json").read_text())
    assert spec["agents"][0]["kwargs"] == {"seed": 3, "prompt_template_path": "prompt.j2"}
    assert spec["extra_instructions"] == ["Be brief."]
    assert spec["datasets"][0]["task_names"] == ["hello-file", "sum-numbers"]
    ran = shell(printed(issued.stdout, "cd "), cwd=work)
    assert ran.returncode == 0, ran.stderr
    job_dir = run_dir / "jobs" / spec["job_name"]
    manifest = json.loads((job_dir / "manifest.json").read_text())
    assert manifest["spec_digest"] == spec_digest(spec)
    # Harbor records what the spec set (it leaves out values equal to its defaults).
    config = json.loads((job_dir / "config.json").read_text())
    assert config["agents"] == spec["agents"]
    assert config["datasets"] == spec["datasets"]
    assert config["extra_instructions"] == spec["extra_instructions"]
    trials = {p.name.split("__")[0] for p in job_dir.iterdir() if p.is_dir()}
    assert trials == {"hello-file", "sum-numbers"}


def test_a_refusal_prints_every_problem_and_writes_nothing(service: Running, work: Path) -> None:
    refused = hbench(
        "runs", "issue", "--url", service.url, "--board", "hbench-demo", "--agent", "claude-code",
        "--attempts", "2", cwd=work,
    )  # fmt: skip

    assert refused.returncode == 1
    assert "its agents: nop, oracle (run-agent-not-allowed)" in refused.stderr
    assert "not 2 (run-attempts-refused)" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert list(work.iterdir()) == []
    assert service.count() == 0


def test_runs_are_listed_and_abandoned_with_an_api_token(service: Running, work: Path) -> None:
    token = service.api_token("alice")
    env = {"HPG_API_TOKEN": token}
    auth = ["--url", service.url, "--token-env", "HPG_API_TOKEN"]
    issued = hbench("runs", "issue", *auth, "--board", "hbench-demo", "--agent", "nop",
                    "--dir", "alice-run", cwd=work, env=env)  # fmt: skip
    assert issued.returncode == 0, issued.stderr
    run_id = json.loads((work / "alice-run" / "run.json").read_text())["run_id"]

    listed = hbench("runs", "list", *auth, "--json", cwd=work, env=env)
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)
    assert (run["run_id"], run["status"]) == (run_id, "issued")
    # Without the token, the local user is signed in, and has no runs.
    local = hbench("runs", "list", "--url", service.url, cwd=work)
    assert "You have no issued runs." in local.stdout

    abandoned = hbench("runs", "abandon", run_id, *auth, cwd=work, env=env)
    assert abandoned.returncode == 0, abandoned.stderr
    assert f"abandoned run {run_id}" in abandoned.stdout
    table = hbench("runs", "list", *auth, cwd=work, env=env)
    assert run_id in table.stdout
    assert "abandoned" in table.stdout
    again = hbench("runs", "abandon", run_id, *auth, cwd=work, env=env)
    assert again.returncode == 1
    assert "was abandoned already" in again.stderr
    assert "(run-not-waiting)" in again.stderr
    outputs = [issued, listed, table, abandoned, again]
    assert all(token not in out.stdout + out.stderr for out in outputs)


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (["--kwargs", "[1]"], "runs-option-invalid"),
        (["--hardware", "no-equals-sign"], "runs-option-invalid"),
        (["--prompt-template", "missing.j2"], "runs-option-invalid"),
        (["--token-env", "HBENCH_TEST_UNSET_VARIABLE"], "runs-token-missing"),
        (["--dir", "taken"], "runs-folder-invalid"),
        (["--environment", "docker"], "runs-option-invalid"),
    ],
)
def test_bad_options_are_refused_before_anything_is_sent(
    work: Path, options: list[str], code: str
) -> None:
    (work / "taken").mkdir()
    (work / "taken" / "spec.json").write_text("{}")

    with upload_server() as recorder:  # records every POST it gets, whatever its path
        base = recorder.url.removesuffix("/api/bench/uploads")
        refused = hbench(
            "runs", "issue", "--url", base, "--board", "hbench-demo", "--agent", "oracle",
            "--sandbox", *options, cwd=work,
        )  # fmt: skip

    assert refused.returncode == 1
    assert f"({code})" in refused.stderr
    assert recorder.received == []
    assert sorted(p.name for p in work.iterdir()) == ["taken"]


def test_an_unreachable_service_is_reported(work: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the client tries it

    refused = hbench("runs", "list", "--url", f"http://127.0.0.1:{port}", cwd=work)

    assert refused.returncode == 1
    assert "(runs-unreachable)" in refused.stderr

"""The issue step with `resume-dir`: it finds the earlier attempt's run in what its artifact
unpacked to, checks the spec there is the run's before it asks the service (whose answer
retires the earlier token), and hands the new run token on as a fresh issue does."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from hbench.action import issue
from hbench.digest import spec_digest
from tests.action.runner import read_file_command
from tests.action.test_oidc import JWT, REQUEST_TOKEN, RUN_TOKEN, endpoints, issued_answer


def saved_run(workspace: Path, *, spec: object | None = None) -> Path:
    """An earlier attempt's run folder, as its artifact holds it."""
    answer = issued_answer()
    run_dir = workspace / "hbench-runs" / answer["job_name"]
    run_dir.mkdir(parents=True)
    (run_dir / "spec.json").write_text(json.dumps(spec or answer["spec"]))
    details = {k: v for k, v in answer.items() if k not in {"token", "spec"}}
    details["spec_digest"] = spec_digest(answer["spec"])
    (run_dir / "run.json").write_text(json.dumps(details))
    return run_dir


def resume(tmp_path: Path, url: str) -> tuple[int, str]:
    for name in ("workspace", "temp"):
        (tmp_path / name).mkdir(exist_ok=True)
    (tmp_path / "output").write_text("")
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_SERVICE_URL": url,
        "INPUT_AGENT": "oracle",
        "INPUT_RESUME_DIR": str(tmp_path / "workspace" / "hbench-runs"),
        "ACTIONS_ID_TOKEN_REQUEST_URL": f"{url}/_apis/idtoken?api-version=2.0",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": REQUEST_TOKEN,
    }
    printed = io.StringIO()
    with redirect_stdout(printed):
        code = issue.main([], environ)
    return code, printed.getvalue()


def test_the_saved_run_is_resumed_with_the_jobs_oidc_token(tmp_path: Path) -> None:
    run_dir = saved_run(tmp_path / "workspace")
    run_id = issued_answer()["run_id"]

    with endpoints() as server:
        code, printed = resume(tmp_path, server.url)

    assert code == 0, printed
    asked, resumed = server.received
    assert (asked.method, asked.path) == ("GET", "/_apis/idtoken")
    assert (resumed.method, resumed.path) == ("POST", f"/api/local-runs/{run_id}/resume")
    assert resumed.headers["authorization"] == f"Bearer {JWT}"
    outputs = read_file_command(tmp_path / "output")
    assert outputs["run-dir"] == str(run_dir)
    assert outputs["run-id"] == run_id
    assert Path(outputs["token-file"]).read_text() == RUN_TOKEN + "\n"
    assert Path(outputs["token-file"]).stat().st_mode & 0o777 == 0o600
    assert printed.splitlines()[:2] == [f"::add-mask::{JWT}", f"::add-mask::{RUN_TOKEN}"]
    details = json.loads((run_dir / "run.json").read_text())
    assert details["expires_at"] == issued_answer()["expires_at"]
    assert "token" not in details


def test_a_spec_the_service_answers_redacted_resumes_by_its_digest(tmp_path: Path) -> None:
    """The service keeps an issued spec redacted, and its digest as issued: the run whose
    spec held a key resumes, matched by that digest."""
    spec = {**issued_answer()["spec"], "agents": [{"kwargs": {"api_key": "sk-live-4f9a"}}]}
    run_dir = saved_run(tmp_path / "workspace", spec=spec)
    details = json.loads((run_dir / "run.json").read_text())
    details["spec_digest"] = spec_digest(spec)
    (run_dir / "run.json").write_text(json.dumps(details))
    stored = {**spec, "agents": [{"kwargs": {"api_key": "[REDACTED]"}}]}
    answer = {**issued_answer(), "spec": stored, "spec_digest": spec_digest(spec)}

    with endpoints(answer) as server:
        code, printed = resume(tmp_path, server.url)

    assert code == 0, printed
    assert json.loads((run_dir / "spec.json").read_text()) == spec


def test_an_answer_for_another_spec_is_refused(tmp_path: Path) -> None:
    saved_run(tmp_path / "workspace")
    other = {"job_name": "hbench-demo-oracle-a3f9c1-00000001", "n_attempts": 2}
    answer = {**issued_answer(), "spec": other, "spec_digest": spec_digest(other)}

    with endpoints(answer) as server:
        code, printed = resume(tmp_path, server.url)

    assert code == 1
    assert "(action-resume-mismatch)" in printed


def test_an_edited_spec_is_refused_before_the_service_is_asked(tmp_path: Path) -> None:
    saved_run(tmp_path / "workspace", spec={"job_name": "x", "n_attempts": 3})

    with endpoints() as server:
        code, printed = resume(tmp_path, server.url)

    assert code == 1
    assert "is not the spec the service issued for run" in printed
    assert "(action-resume-mismatch)" in printed
    assert server.received == []  # neither the token endpoint nor the service


def test_a_folder_of_two_runs_is_refused(tmp_path: Path) -> None:
    saved_run(tmp_path / "workspace")
    other = tmp_path / "workspace" / "hbench-runs" / "another"
    other.mkdir()
    (other / "run.json").write_text("{}")

    with endpoints() as server:
        code, printed = resume(tmp_path, server.url)

    assert code == 1
    assert "holds 2 runs' folders" in printed
    assert "(action-input-invalid)" in printed
    assert server.received == []

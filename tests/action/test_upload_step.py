"""What the upload step sends: beside a run token, a fresh OIDC token of the job, asked for
right before the upload; the run token alone without `id-token: write`, or when the runner
gives none (with a warning); an API token alone for a job that was not issued. Sent to a
recording endpoint, with a real sealed job of the demo."""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from hbench.action import upload
from hbench.jobs.sealing import seal
from tests.action.conftest import token_endpoint
from tests.conftest import HarborJobFactory
from tests.hbench.cli.upload_server import UploadServer, upload_server

RUN_TOKEN = "hpr_run_token_for_the_upload_step_0123"
API_TOKEN = "hpg_api_token_for_the_upload_step_0123"
JWT = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ4In0.c2lnbmF0dXJl"

pytestmark = pytest.mark.harbor


@pytest.fixture(scope="module")
def sealed(harbor_job: HarborJobFactory, tmp_path_factory: pytest.TempPathFactory) -> Path:
    job_dir = tmp_path_factory.mktemp("sealed") / "upload-step"
    shutil.copytree(harbor_job("upload-step"), job_dir)
    seal(job_dir)
    return job_dir


def step(tmp_path: Path, server: UploadServer, sealed: Path, **environ: str) -> tuple[int, str]:
    (tmp_path / "output").write_text("")
    (tmp_path / "summary").write_text("")
    (tmp_path / "temp").mkdir(exist_ok=True)
    token_file = tmp_path / "run-token"
    token_file.write_text(RUN_TOKEN + "\n")
    base = {
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "INPUT_SERVICE_URL": server.url.removesuffix("/api/bench/uploads"),
        "INPUT_JOB_DIR": str(sealed),
        "INPUT_TOKEN_FILE": str(token_file),
        "INPUT_RUNNER_ENVIRONMENT": "github-hosted",
    }
    printed = io.StringIO()
    with redirect_stdout(printed):
        code = upload.main([], {**base, **environ})
    return code, printed.getvalue()


def minting(value: str) -> Callable[[str], str]:
    return lambda audience: value


def test_a_fresh_oidc_token_goes_beside_the_run_token(tmp_path: Path, sealed: Path) -> None:
    with upload_server() as server, token_endpoint(minting(JWT)) as tokens:
        code, printed = step(tmp_path, server, sealed, **tokens.environ())

    assert code == 0, printed
    (sent,) = server.received
    assert sent.headers["hpg-run-token"] == RUN_TOKEN
    assert sent.headers["authorization"] == f"Bearer {JWT}"
    assert tokens.audiences == [server.url.removesuffix("/api/bench/uploads")]
    lines = printed.splitlines()
    assert lines[:2] == [f"::add-mask::{RUN_TOKEN}", f"::add-mask::{JWT}"]
    assert all(JWT not in line and RUN_TOKEN not in line for line in lines[2:])


def test_without_id_token_write_the_run_token_goes_alone(tmp_path: Path, sealed: Path) -> None:
    with upload_server() as server:
        code, printed = step(tmp_path, server, sealed)

    assert code == 0, printed
    (sent,) = server.received
    assert sent.headers["hpg-run-token"] == RUN_TOKEN
    assert "authorization" not in sent.headers
    assert "uploading with the run token alone" in printed
    assert "::warning" not in printed


def test_when_the_runner_gives_no_token_the_upload_says_so_and_goes_ahead(
    tmp_path: Path, sealed: Path
) -> None:
    with upload_server() as server, token_endpoint(minting(JWT)) as tokens:
        environ = {**tokens.environ(), "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "not-the-runners"}
        code, printed = step(tmp_path, server, sealed, **environ)

    assert code == 0, printed
    (sent,) = server.received
    assert "authorization" not in sent.headers
    (warning,) = [line for line in printed.splitlines() if line.startswith("::warning")]
    assert "title=hbench%3A the upload is not bound to this workflow run" in warning
    assert "HTTP 401" in warning
    assert "can't count as run on CI" in warning


def test_an_api_token_upload_sends_no_oidc_token(tmp_path: Path, sealed: Path) -> None:
    with upload_server() as server, token_endpoint(minting(JWT)) as tokens:
        code, printed = step(
            tmp_path, server, sealed, INPUT_TOKEN_FILE="", INPUT_API_TOKEN=API_TOKEN,
            **tokens.environ(),
        )  # fmt: skip

    assert code == 0, printed
    (sent,) = server.received
    assert sent.headers["authorization"] == f"Bearer {API_TOKEN}"
    assert "hpg-run-token" not in sent.headers
    assert tokens.audiences == []

"""`hbench jobs upload` and `hbench jobs pack` against a small upload endpoint on loopback."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from hbench.demo import demo_spec
from tests.conftest import HarborJobFactory
from tests.hbench.cli.helpers import hbench, write_spec
from tests.hbench.cli.upload_server import upload_server

pytestmark = pytest.mark.harbor


@pytest.fixture(scope="module")
def sealed_job(tmp_path_factory: pytest.TempPathFactory, demo_registry: Path) -> Path:
    """A demo job run and sealed by `hbench run`, shared by this module's tests."""
    folder = tmp_path_factory.mktemp("sealed")
    spec_path = write_spec(folder, demo_spec(demo_registry, "to-upload"))
    ran = hbench("run", "-c", str(spec_path), cwd=folder)
    assert ran.returncode == 0, ran.stderr
    return folder / "jobs" / "to-upload"


def test_upload_streams_the_packed_job_with_the_api_token(tmp_path: Path, sealed_job: Path) -> None:
    with upload_server() as server:
        sent = hbench(
            "jobs", "upload", "--url", server.url, "--token-env", "MY_TOKEN", str(sealed_job),
            cwd=tmp_path, env={"MY_TOKEN": "hpg_secret-value"},
        )  # fmt: skip

    assert sent.returncode == 0, sent.stderr
    assert '"status": "private"' in sent.stdout
    (request,) = server.received
    assert request.path == "/api/bench/uploads"
    assert request.headers["authorization"] == "Bearer hpg_secret-value"
    assert request.headers["content-type"] == "application/gzip"
    # What was sent is exactly the deterministic pack of the job.
    packed = hbench("jobs", "pack", "-p", str(sealed_job), "-o", "job.tgz", cwd=tmp_path)
    assert packed.returncode == 0, packed.stderr
    assert request.body == (tmp_path / "job.tgz").read_bytes()
    assert "hpg_secret-value" not in sent.stdout + sent.stderr


def test_upload_with_a_run_token_header(tmp_path: Path, sealed_job: Path) -> None:
    with upload_server() as server:
        sent = hbench(
            "jobs", "upload", "--url", server.url, "-H", "hpg-run-token: hpr_abc", str(sealed_job),
            cwd=tmp_path,
        )  # fmt: skip

    assert sent.returncode == 0, sent.stderr
    (request,) = server.received
    assert request.headers["hpg-run-token"] == "hpr_abc"
    assert "authorization" not in request.headers


def test_upload_without_a_token_sends_nothing(tmp_path: Path, sealed_job: Path) -> None:
    with upload_server() as server:
        sent = hbench(
            "jobs", "upload", "--url", server.url, "--token-env", "UNSET_VARIABLE", str(sealed_job),
            cwd=tmp_path,
        )  # fmt: skip

    assert sent.returncode == 1
    assert "(upload-token-missing)" in sent.stderr
    assert server.received == []


def test_a_refusal_prints_the_service_message_and_exits_1(tmp_path: Path, sealed_job: Path) -> None:
    with upload_server() as server:
        server.answer_status = 422
        server.answer_body = {
            "detail": "the job did not finish (job-unfinished)",
            "code": "job-unfinished",
            "errors": [
                {"code": "job-unfinished", "message": "the job did not finish"},
                {"code": "sandbox-unavailable", "message": "a second failure"},
            ],
        }
        sent = hbench(
            "jobs", "upload", "--url", server.url, "-H", "hpg-run-token: hpr_abc", str(sealed_job),
            cwd=tmp_path,
        )  # fmt: skip

    assert sent.returncode == 1
    assert "the job did not finish (job-unfinished)" in sent.stderr
    assert "a second failure (sandbox-unavailable)" in sent.stderr
    assert "422" in sent.stderr


def test_a_changed_job_is_not_sent(
    tmp_path: Path, sealed_job: Path, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(sealed_job)
    (job / "result.json").write_text((job / "result.json").read_text().replace("1.0", "0.9"))

    with upload_server() as server:
        sent = hbench(
            "jobs", "upload", "--url", server.url, "-H", "hpg-run-token: hpr_abc", str(job),
            cwd=tmp_path,
        )  # fmt: skip

    assert sent.returncode == 1
    assert "(manifest-file-changed)" in sent.stderr
    assert "result.json" in sent.stderr
    assert server.received == []


def test_an_unreachable_service_is_a_clear_error(tmp_path: Path, sealed_job: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sent = hbench(
        "jobs", "upload", "--url", f"http://127.0.0.1:{port}/api/bench/uploads",
        "-H", "hpg-run-token: hpr_abc", str(sealed_job), cwd=tmp_path,
    )  # fmt: skip

    assert sent.returncode == 1
    assert "(upload-unreachable)" in sent.stderr
    assert "Traceback" not in sent.stderr


def test_pack_twice_gives_the_same_bytes_and_tells_the_cap(
    tmp_path: Path, harbor_job: HarborJobFactory
) -> None:
    job = harbor_job("pack-me", "-k", "2")
    first = hbench("jobs", "pack", "-p", str(job), "-o", "a.tgz", cwd=tmp_path)
    second = hbench("jobs", "pack", "-p", str(job), "-o", "b.tgz", cwd=tmp_path)

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert (tmp_path / "a.tgz").read_bytes() == (tmp_path / "b.tgz").read_bytes()
    assert "MiB of the 95 MiB upload cap" in first.stdout

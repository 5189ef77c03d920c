"""Jobs named in any script upload, publish and download: the download's
`Content-Disposition` holds the name whole in `filename*` (RFC 5987) and an ASCII
stand-in in `filename`, and every header the service sends is Latin-1."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from hbench.jobs.manifest import load_manifest
from hbench.jobs.sealing import seal

from ..bench.jobs import SealedJob, packed
from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import FakeClock, publish, uploaded

NAMES = {
    "greek": "Ωμέγα-δοκιμή",
    "cyrillic": "Проверка-задачи",
    "cjk": "基准测试ジョブ",
    "arabic": "مهمة-الاختبار",
    "emoji": "rocket-🚀-run",
    "accents": "café-résumé",
}


def named(sealed: SealedJob, folder: Path, name: str) -> bytes:
    """A copy of the sealed job under a new Harbor job id, its folder and `job_name` both
    `name`, sealed again."""
    dest = folder / uuid.uuid4().hex[:8] / name
    shutil.copytree(sealed.path, dest)
    old_id = json.loads((dest / "result.json").read_text())["id"]
    new_id = str(uuid.uuid4())
    for path in dest.rglob("*.json"):
        if path.name != "manifest.json":
            path.write_text(path.read_text().replace(old_id, new_id))
    config = json.loads((dest / "config.json").read_text())
    config["job_name"] = name
    (dest / "config.json").write_text(json.dumps(config, indent=4, ensure_ascii=False))
    seal(dest, spec_digest=load_manifest(sealed.path).spec_digest)
    return packed(dest)


def assert_latin1_headers(answer: Response) -> None:
    for name, value in answer.headers.raw:
        name.decode("ascii")
        value.decode("latin-1")


@pytest.mark.parametrize("script", list(NAMES))
def test_a_job_named_in_any_script_downloads_under_its_name(
    client: TestClient,
    *,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
    clock: FakeClock,
    script: str,
) -> None:
    name = NAMES[script]
    token = make_token("alice")
    job_id = uploaded(client, named(sealed, tmp_path, name), token)
    page = client.get(f"/api/bench/jobs/{job_id}", headers=bearer(token))
    assert page.json()["name"] == name
    published = publish(client, job_id, token)
    assert published.status_code == 200, published.text

    anyone = TestClient(client.app, **REMOTE)
    download = anyone.get(f"/api/bench/jobs/{job_id}/download")

    assert download.status_code == 200, download.text
    assert download.content[:2] == b"\x1f\x8b"
    assert_latin1_headers(download)
    disposition = download.headers["content-disposition"]
    fallback, encoded = disposition.split("; filename*=UTF-8''")
    assert unquote(encoded, encoding="utf-8", errors="strict") == f"{name}.tar.gz"
    assert fallback.startswith('attachment; filename="') and fallback.endswith('.tar.gz"')
    fallback.encode("ascii")
    if script == "accents":
        assert fallback == 'attachment; filename="cafe-resume.tar.gz"'
    if script == "emoji":
        assert fallback == 'attachment; filename="rocket--run.tar.gz"'
    if script in ("greek", "cjk", "arabic"):
        assert fallback == 'attachment; filename="job.tar.gz"'

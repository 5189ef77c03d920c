"""The service serves the built site under `/site`."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.site.serve import mount_site, rebuild


def test_the_mounted_site_serves_pages_and_their_json(data_repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "site"
    service = FastAPI()
    mount_site(service, folder)
    client = TestClient(service)
    assert client.get("/site/").status_code == 404  # nothing built yet
    report = rebuild(data_repo, folder)
    assert report.full
    home = client.get("/site/")
    assert home.status_code == 200 and "<h1>Boards</h1>" in home.text
    board = client.get("/site/boards/hbench-demo/")
    assert board.status_code == 200 and "hbench demo" in board.text
    assert (
        client.get("/site/boards/hbench-demo/index.json").json()["board"]["slug"] == "hbench-demo"
    )
    assert client.get("/site/registry/index.json").json()["version"] == 1
    assert rebuild(data_repo, folder).units_rendered == 0

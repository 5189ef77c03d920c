"""The service serves the built site under `/site`."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.settings import Settings
from app.site.serve import SiteFiles, mount_site, rebuild
from sitebuild.build import STATE_FILE


def mounted(tmp_path: Path) -> tuple[FastAPI, Path]:
    """A bare app with the site mounted, and the folder its settings name for the site."""
    service = FastAPI()
    service.state.settings = Settings(state_dir=tmp_path / "state")
    mount_site(service)
    return service, service.state.settings.site_dir


def test_the_mounted_site_serves_pages_and_their_json(data_repo: Path, tmp_path: Path) -> None:
    service, folder = mounted(tmp_path)
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


class _RebuiltWhileServing(SiteFiles):
    """Replaces the page the way a rebuild does (its successor renamed over it) just after
    the page was looked up, before it is read: the moment a served page can change."""

    def lookup_path(self, path: str) -> tuple[str, os.stat_result | None]:
        found, stat_result = super().lookup_path(path)
        if found.endswith("page.html"):
            successor = Path(f"{found}.next")
            successor.write_text("<p>the new page, longer than the old one</p>")
            successor.replace(found)
        return found, stat_result


def test_a_page_replaced_while_it_is_served_is_sent_whole(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("<p>old</p>")
    (tmp_path / STATE_FILE).write_text("{}")  # a finished build's folder
    service = FastAPI()
    service.mount("/site", _RebuiltWhileServing(directory=tmp_path, html=True))
    response = TestClient(service).get("/site/page.html")
    assert response.status_code == 200
    assert response.text == "<p>the new page, longer than the old one</p>"
    assert response.headers["content-length"] == str(len(response.content))
    assert response.headers["content-type"].startswith("text/html")


def test_served_pages_keep_their_validators(data_repo: Path, tmp_path: Path) -> None:
    service, folder = mounted(tmp_path)
    rebuild(data_repo, folder)
    client = TestClient(service)
    home = client.get("/site/")
    assert home.headers["last-modified"] and home.headers["etag"]
    again = client.get("/site/", headers={"if-none-match": home.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    head = client.head("/site/boards/hbench-demo/")
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) > 0
    assert client.get("/site/boards/no-such-board/").status_code == 404

"""A realistic data repository on disk and the site built from it, once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild.build import build_site
from sitebuild.config import SiteConfig

from .datarepo import realistic_state, write_repo

SERVICE = "https://hbench.example"


@pytest.fixture(scope="module")
def data_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_repo(realistic_state(), tmp_path_factory.mktemp("data-repo"))


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory, data_repo: Path) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(data_repo, out, SiteConfig(service_url=SERVICE))
    return out

"""The builder's realistic data repository (tests/sitebuild/conftest.py), for the service's
tests of the site."""

from __future__ import annotations

from tests.sitebuild.conftest import SERVICE, data_repo

__all__ = ["SERVICE", "data_repo"]

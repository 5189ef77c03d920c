"""The service's fixtures, as tests/app/ has them: the app on local settings, its clients,
the database, API tokens, and the real sealed job the uploads send."""

from __future__ import annotations

from tests.app.bench.conftest import clock, sealed, sealed_archive
from tests.app.conftest import (
    app,
    client,
    database_url,
    db,
    make_token,
    migrated_database_url,
    no_service_environment,
    remote,
    settings,
)

__all__ = [
    "app",
    "client",
    "clock",
    "database_url",
    "db",
    "make_token",
    "migrated_database_url",
    "no_service_environment",
    "remote",
    "sealed",
    "sealed_archive",
    "settings",
]

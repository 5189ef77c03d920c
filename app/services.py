"""The service's parts, as one object: `Services` (settings, database, blob store, registry,
clock), made once when the app starts and handed to a handler by one dependency
(`ServicesDep`), and to an upload worker by one picklable recipe (`ServicesRecipe`).

A handler asks for `services: ServicesDep` and passes `services` on; nothing below it is
handed the five parts one by one. Tests still replace a part the FastAPI way, with
`app.dependency_overrides` of `get_settings`, `get_database`, `get_registry` or
`get_clock`: the dependency reads those overrides, so a test's clock or registry is the
one every handler's services carry.

A worker is another process: the recipe holds what of the parts can cross to it (the
database's URL, the blob store's location, the settings and the registry pickled once per
process, `Sent`) and the moment the request was taken, which is the worker's clock.
"""

from __future__ import annotations

import pickle
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, cast

from fastapi import Depends, Request
from sqlalchemy.engine import URL

from app.blobs import BlobLocation, BlobStore, location_of, store_at
from app.clock import Clock, get_clock
from app.db.models import utcnow
from app.db.session import Database
from app.dependencies import Resources, get_database
from app.registry import default_registry, get_registry
from app.settings import Settings, get_settings
from registry.loader import Registry

KEPT_DATABASES = 4
"""Database engines a worker keeps open, one per URL: a server has one; a test process
many, one after another."""
KEPT_SENT = 8
"""Objects sent by `Sent` that each side keeps: a server has one registry and one settings
object; a test process a few."""


@dataclass(frozen=True)
class Services:
    """What every handler may use: the settings, the database, the blob store, the registry
    runs are issued against, and the clock that tells the time."""

    settings: Settings
    database: Database
    blobs: BlobStore
    registry: Registry
    clock: Clock

    @classmethod
    def started(cls, settings: Settings, resources: Resources) -> Services:
        """The services of an app that has just opened its resources."""
        return cls(settings, resources.database, resources.blobs, default_registry(), utcnow)

    def recipe(self) -> ServicesRecipe:
        """What an upload worker makes these services again from, the clock stopped at now."""
        return ServicesRecipe(
            settings=sent(self.settings),
            database_url=shared_url(self.database.engine.url),
            blob_location=location_of(self.blobs),
            registry=sent(self.registry),
            now=self.clock(),
        )


@dataclass(frozen=True)
class ServicesRecipe:
    """The services as they cross to another process."""

    settings: Sent[Settings]
    database_url: str
    blob_location: BlobLocation
    registry: Sent[Registry]
    now: datetime
    """The moment the request was taken: the worker's clock tells it."""

    def services(self) -> Services:
        """The services in this process: its engine for the database and its blob store,
        opened on first use and kept for the calls after."""
        now = self.now
        return Services(
            settings=self.settings.value(),
            database=database_at(self.database_url),
            blobs=blob_store_at(self.blob_location),
            registry=self.registry.value(),
            clock=lambda: now,
        )


async def get_services(request: Request) -> Services:
    """The app's services, with a test's overrides of their parts in place. `async`, and
    only handing over what the app holds: no hop to the thread pool."""
    services = getattr(request.app.state, "services", None)
    if not isinstance(services, Services):
        raise RuntimeError("the app has not started: use it inside its lifespan")
    overrides = getattr(request.app, "dependency_overrides", None)
    if not overrides:
        return services
    changed = {
        name: overrides[dependency]()
        for name, dependency in OVERRIDABLE.items()
        if dependency in overrides
    }
    return replace(services, **changed) if changed else services


OVERRIDABLE: dict[str, object] = {
    "settings": get_settings,
    "database": get_database,
    "registry": get_registry,
    "clock": get_clock,
}
"""The parts a test replaces by `app.dependency_overrides[dependency] = lambda: part`."""


ServicesDep = Annotated[Services, Depends(get_services)]


# --- Crossing to a worker ----------------------------------------------------------------


def shared_url(url: URL) -> str:
    """The database's URL as another process opens the same database: a SQLite file by
    its absolute path (a worker's working folder may differ), the password kept."""
    if url.get_backend_name() == "sqlite":
        path = url.database or ""
        if path in ("", ":memory:") or url.query.get("mode") == "memory":
            raise ValueError(
                "an in-memory SQLite database can't be shared with the upload workers: "
                "set HBENCH_DATABASE_URL to a SQLite file or a PostgreSQL database"
            )
        url = url.set(database=str(Path(path).absolute()))
    return url.render_as_string(hide_password=False)


@dataclass(frozen=True)
class Sent[T]:
    """A large argument that is the same object call after call (the registry, about 57 KB
    pickled): pickled once in the server and unpickled once in each worker, which keeps
    it by its key. An upload paid for both every time, a millisecond of CPU."""

    key: str
    data: bytes

    def value(self) -> T:
        """The object, from this worker's keeping or unpickled now."""
        with _received_lock:
            kept = _received.pop(self.key, None)
            if kept is None:
                kept = pickle.loads(self.data)  # noqa: S301 - the server's own bytes
            _received[self.key] = kept
            while len(_received) > KEPT_SENT:
                _received.popitem(last=False)
        return cast(T, kept)


_sending: OrderedDict[int, tuple[object, Sent[Any]]] = OrderedDict()
_sending_lock = threading.Lock()
_received: OrderedDict[str, object] = OrderedDict()
_received_lock = threading.Lock()


def sent[T](value: T) -> Sent[T]:
    """`value` as it is sent to the workers, pickled on its first call in this process.
    Kept by identity (with the object itself, so its id can't be another's): the value
    must not change while it is sent."""
    with _sending_lock:
        found = _sending.pop(id(value), None)
        if found is None or found[0] is not value:
            found = (value, Sent(uuid.uuid4().hex, pickle.dumps(value)))
        _sending[id(value)] = found
        while len(_sending) > KEPT_SENT:
            _sending.popitem(last=False)
        return cast(Sent[T], found[1])


_databases: OrderedDict[str, Database] = OrderedDict()


def database_at(url: str) -> Database:
    """The worker's engine for a database URL, opened on first use; the least recently
    used beyond `KEPT_DATABASES` is closed. A worker runs one call at a time."""
    database = _databases.pop(url, None) or Database(url, pool_size=1, max_overflow=1)
    _databases[url] = database
    while len(_databases) > KEPT_DATABASES:
        _, oldest = _databases.popitem(last=False)
        oldest.dispose()
    return database


@lru_cache(maxsize=16)
def blob_store_at(location: BlobLocation) -> BlobStore:
    return store_at(location)

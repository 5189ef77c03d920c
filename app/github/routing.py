"""The event router each bot behaviour owns (after gidgethub's `routing.Router`, as
python/bedevere uses it): handlers register for an event and some of its actions, and
routers are joined into one in `app/github/behaviours.py`.

Handlers see only events that passed the webhook edge: signed, for our App, not seen
before. Each reads the payload fields it needs into its own models (`app.github.events`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.clock import Clock
from app.db.session import Database
from app.github.jobs import JobActions
from app.github.port import GitHubPort
from app.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """A verified webhook delivery: its event, action, id and JSON payload."""

    name: str
    action: str | None
    delivery_id: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Context:
    """What handlers act through: GitHub, the database, the settings, the clock, and the
    job actions (None until publishing provides them)."""

    github: GitHubPort
    database: Database
    settings: Settings
    clock: Clock
    job_actions: JobActions | None = None


Handler = Callable[[Event, Context], Awaitable[None]]


class EventRouter:
    """Handlers by event and action; `EventRouter(a, b)` joins the routers a and b."""

    def __init__(self, *routers: EventRouter) -> None:
        self._handlers: dict[tuple[str, str | None], list[Handler]] = defaultdict(list)
        for router in routers:
            for key, handlers in router._handlers.items():
                self._handlers[key].extend(handlers)

    def register(self, event: str, *actions: str) -> Callable[[Handler], Handler]:
        """Call the decorated handler for `event` with one of `actions` (any, if none)."""

        def decorate(handler: Handler) -> Handler:
            for action in actions or (None,):
                self._handlers[(event, action)].append(handler)
            return handler

        return decorate

    def events(self) -> set[str]:
        """The events some handler is registered for (what the App subscribes to)."""
        return {event for event, _ in self._handlers}

    def handlers_for(self, event: Event) -> list[Handler]:
        handlers = list(self._handlers.get((event.name, None), []))
        if event.action is not None:
            handlers += self._handlers.get((event.name, event.action), [])
        return handlers

    async def dispatch(self, event: Event, context: Context) -> None:
        """Run every handler for the event; if any failed, raise after all have run."""
        failures: list[BaseException] = []
        for handler in self.handlers_for(event):
            try:
                await handler(event, context)
            except Exception as error:
                log.exception("handling %s delivery %s failed", event.name, event.delivery_id)
                failures.append(error)
        if failures:
            raise failures[0]

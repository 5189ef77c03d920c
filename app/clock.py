"""The service's clock, as a dependency: handlers ask it the time, and tests move it.

Expiry and limits depend on "now"; a test of a 48-hour token lifetime overrides
`get_clock` with a clock it sets, rather than patching `datetime` or waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated

from fastapi import Depends, Request

from app.db.models import utcnow

Clock = Callable[[], datetime]
"""A function that tells the time: timezone-aware, in UTC."""


def get_clock() -> Clock:
    """The wall clock. A FastAPI dependency: tests override it with their own clock."""
    return utcnow


async def request_clock(request: Request) -> Clock:
    """The clock, as a dependency (`ClockDep`): a test's override of `get_clock`, else the
    wall clock. Read here rather than declared as `Depends(get_clock)`, so that without an
    override the handlers' clock costs no hop to the thread pool (`app.dependencies`)."""
    overrides = getattr(request.app, "dependency_overrides", None) or {}
    clock: Clock = overrides.get(get_clock, get_clock)()
    return clock


ClockDep = Annotated[Clock, Depends(request_clock)]

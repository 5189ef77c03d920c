"""The service's clock, as a dependency: handlers ask it the time, and tests move it.

Expiry and limits depend on "now"; a test of a 48-hour token lifetime overrides
`get_clock` with a clock it sets, rather than patching `datetime` or waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated

from fastapi import Depends

from app.db.models import utcnow

Clock = Callable[[], datetime]
"""A function that tells the time: timezone-aware, in UTC."""


def get_clock() -> Clock:
    """The wall clock. A FastAPI dependency: tests override it with their own clock."""
    return utcnow


ClockDep = Annotated[Clock, Depends(get_clock)]

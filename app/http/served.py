"""The settings an app's handlers see, read from a request's scope by the middlewares."""

from __future__ import annotations

from starlette.types import Scope

from app.dependencies import app_settings
from app.settings import Settings


def served_settings(scope: Scope) -> Settings:
    """The settings of the app serving this request, a test's override included."""
    return app_settings(scope.get("app"))

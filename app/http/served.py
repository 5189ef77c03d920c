"""The settings an app's handlers see, read from a request's scope by the middlewares."""

from __future__ import annotations

from starlette.types import Scope

from app.settings import Settings, get_settings


def served_settings(scope: Scope) -> Settings:
    """The settings of the app serving this request, a test's override included."""
    app = scope.get("app")
    overrides = getattr(app, "dependency_overrides", {})
    settings: Settings = overrides.get(get_settings, get_settings)()
    return settings

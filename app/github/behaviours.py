"""The bot's behaviours, joined in one place: each module owns its router."""

from __future__ import annotations

from app.github import comments, installations, registry_checks
from app.github.routing import EventRouter

BEHAVIOURS = EventRouter(installations.router, comments.router, registry_checks.router)

"""What the site says that the data repository does not hold: the service's address and
the limits the service enforces (shown on the limits page)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import cast

from app.settings import Settings
from hbench.limits import UNPACKED_MAX_BYTES, UPLOAD_MAX_BYTES


def _default(name: str) -> timedelta:
    return cast(timedelta, Settings.model_fields[name].default)


# The service's own defaults, so the two never disagree.
RUN_TOKEN_LIFETIME = _default("run_token_lifetime")
PUBLISH_WINDOW = _default("publish_window")


@dataclass(frozen=True)
class SiteConfig:
    """The site's settings; the defaults are the service's."""

    service_url: str | None = None
    run_token_lifetime: timedelta = RUN_TOKEN_LIFETIME
    publish_window: timedelta = PUBLISH_WINDOW
    upload_max_bytes: int = UPLOAD_MAX_BYTES
    unpacked_max_bytes: int = UNPACKED_MAX_BYTES

    @classmethod
    def from_settings(cls, settings: Settings) -> SiteConfig:
        """The address and limits of a running service, for the site it serves itself."""
        return cls(
            service_url=settings.public_url,
            run_token_lifetime=settings.run_token_lifetime,
            publish_window=settings.publish_window,
            upload_max_bytes=settings.upload_max_bytes,
            unpacked_max_bytes=settings.unpacked_max_bytes,
        )

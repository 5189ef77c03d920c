"""What the site says that the data repository does not hold: the service's address and
the limits the service enforces (shown on the limits page). The service gives its own
(`app.datarepo.service.site_config`); the defaults are the service's defaults."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from hbench.limits import PUBLISH_WINDOW, RUN_TOKEN_LIFETIME, UNPACKED_MAX_BYTES, UPLOAD_MAX_BYTES


@dataclass(frozen=True)
class SiteConfig:
    """The site's settings; the defaults are the service's."""

    service_url: str | None = None
    run_token_lifetime: timedelta = RUN_TOKEN_LIFETIME
    publish_window: timedelta = PUBLISH_WINDOW
    upload_max_bytes: int = UPLOAD_MAX_BYTES
    unpacked_max_bytes: int = UNPACKED_MAX_BYTES

"""What the access log keeps of an address: never a secret carried in its query string.

GitHub sends the OAuth sign-in's one-time `code` and its `state` back in the callback's
query string, and uvicorn's access log writes every request's path with its query. The
filter, installed on uvicorn's access logger by `hbench-app serve` (`app.observe.logs`), drops
the callback's query whole, and anywhere else replaces the value of a parameter named like
a credential, or that looks like a key or one of the service's tokens, with `[REDACTED]`.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl, quote, urlencode

from app.auth.sessions import CALLBACK_PATH
from app.uploads.redact import REDACTED, redact_text

FILTERED = "[filtered]"
QUERY_DROPPED = frozenset({CALLBACK_PATH})
"""Addresses whose whole query is a credential: the sign-in callback's `code` and `state`."""
SECRET_NAMES = re.compile(
    r"(?i)^(?:code|state|token|.*_token|access_token|id_token|secret|.*_secret|password|"
    r"key|api_key|apikey|signature|sig|jwt|session)$"
)
TOKEN_VALUE = re.compile(r"^(?:hp[gr]_|gh[opsur]_|github_pat_)|^[\w-]+\.[\w-]+\.[\w-]+$")
"""The service's API and run tokens, GitHub's tokens, and anything shaped like a JWT."""
PATH_ARGUMENT = 2
"""Where uvicorn's access line (`'%s - "%s %s HTTP/%s" %d'`) has the path and query."""


def filtered_path(target: str) -> str:
    """A request's path and query as the access log may keep them."""
    path, mark, query = target.partition("?")
    if not mark:
        return target
    if path in QUERY_DROPPED:
        return f"{path}?{FILTERED}"
    pairs = [(name, kept_value(name, value)) for name, value in parse_qsl(query, True)]
    return f"{path}?{urlencode(pairs, safe='[]', quote_via=quote)}"


def kept_value(name: str, value: str) -> str:
    if SECRET_NAMES.match(name) or TOKEN_VALUE.search(value):
        return REDACTED
    return redact_text(f"{name}={value}").text.split("=", 1)[1]


class AccessQueryFilter(logging.Filter):
    """Rewrite the path of uvicorn's access lines; never drops a line."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > PATH_ARGUMENT:
            target = args[PATH_ARGUMENT]
            if isinstance(target, str):
                record.args = (
                    *args[:PATH_ARGUMENT],
                    filtered_path(target),
                    *args[PATH_ARGUMENT + 1 :],
                )
        return True

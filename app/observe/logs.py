"""The service's logging: uvicorn's lines and the app's own, as text or as JSON lines.

`log_config(format)` is the `logging.config.dictConfig` that `hbench-app serve` gives
uvicorn. Both formats carry every line of the app's loggers (`app.*`, at INFO and above:
the writer's pushes, the regrade worker, the maintenance task), not only uvicorn's, and
each line written while a request is answered carries its id (`request_id`, also sent back
as `x-request-id`). JSON lines (`HBENCH_LOG_FORMAT=json`) are `python-json-logger`'s: one
object per line with `time`, `level`, `logger`, `message` and `request_id`, for a log
collector. The access log's queries are filtered either way (`app.http.access_log`).
"""

from __future__ import annotations

import copy
import logging
from typing import Any, Literal

import uvicorn.config

from app.observe.access_log import AccessQueryFilter
from app.observe.requests import request_id

LogFormat = Literal["text", "json"]
TEXT = "%(levelprefix)s %(message)s"
APP_TEXT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s"
JSON_RENAMED = {"asctime": "time", "levelname": "level", "name": "logger"}


class RequestIdFilter(logging.Filter):
    """Put the current request's id (or `-` outside a request) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        return True


def log_config(log_format: LogFormat = "text") -> dict[str, Any]:
    """uvicorn's logging configuration, with the app's loggers, request ids, and the
    access log's filter on its logger (so every handler of it sees only filtered lines)."""
    config: dict[str, Any] = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    filters = config.setdefault("filters", {})
    filters["access-query"] = {"()": AccessQueryFilter}
    filters["request-id"] = {"()": RequestIdFilter}
    config["loggers"]["uvicorn.access"]["filters"] = ["access-query"]
    formatters = config["formatters"]
    formatters["app"] = {"format": APP_TEXT}
    if log_format == "json":
        json_formatter = {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": JSON_FIELDS,
            "rename_fields": JSON_RENAMED,
        }
        for name in list(formatters):
            formatters[name] = dict(json_formatter)
    handlers = config["handlers"]
    for handler in handlers.values():
        handler["filters"] = ["request-id"]
    handlers["app"] = {
        "formatter": "app",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
        "filters": ["request-id"],
    }
    config["loggers"]["app"] = {"handlers": ["app"], "level": "INFO", "propagate": False}
    return config

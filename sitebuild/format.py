"""How numbers, dates and settings read on the site.

Board scores are fractions of the mean reward (`docs/registry.md`); a benchmark whose
metric is written in percent shows them times 100, as its known scores are written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache

from pydantic import JsonValue

from registry.schema import MetricScale, SourceType

NONE = "—"
CRUMB = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "
"""Between the links of a page's breadcrumbs."""

SOURCE_LABELS: Mapping[SourceType, str] = {
    "self_reported": "self-reported",
    "independent": "independent",
    "reproduced": "reproduced",
}


def scaled(value: float, scale: MetricScale) -> float:
    """A fraction of the mean reward on the metric's scale."""
    return value * 100 if scale == "percent" else value


def score(value: float | None, scale: MetricScale) -> str:
    """A board score (a fraction) as the metric writes it."""
    return NONE if value is None else on_scale(scaled(value, scale), scale)


def on_scale(value: float | None, scale: MetricScale) -> str:
    """A value already on the metric's scale: a known score, a scaled board score."""
    if value is None:
        return NONE
    if scale == "percent":
        return f"{value:.1f}"
    return f"{value:.0f}" if scale == "elo" else f"{value:.3f}"


def number(value: float) -> str:
    """A chart's tick or point value: as short as it is exact."""
    return f"{value:g}"


def interval(low: float | None, high: float | None, scale: MetricScale) -> str:
    if low is None or high is None:
        return ""
    return f"{score(low, scale)}\N{EN DASH}{score(high, scale)}"


def usd(value: float | None) -> str:
    if value is None:
        return NONE
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    return f"${value:.4f}" if value < 0.01 else f"${value:.3f}"


def count(value: float | None) -> str:
    """A token count, short: 950, 12.3k, 4.56M."""
    if value is None:
        return NONE
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.0f}"


def duration(seconds: float) -> str:
    """A length of time, short: 0.4 s, 45 s, 3 min 07 s, 2 h 05 min."""
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, whole = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {whole:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


# Times are cached: a run's publication time shows on its board's, entry's and own page.
# Each is cut from `isoformat()` (`2026-10-01T12:03:04[.123456]+00:00`), three times as
# fast as `strftime` and a site shows some 50,000 of them.
@lru_cache(maxsize=65536)
def when(at: datetime | None) -> str:
    if at is None:
        return NONE
    text = at.isoformat()
    return f"{text[:10]} {text[11:16]} UTC"


@lru_cache(maxsize=65536)
def day(at: datetime | None) -> str:
    return NONE if at is None else at.isoformat()[:10]


@lru_cache(maxsize=65536)
def iso(at: datetime) -> str:
    """The machine-readable form for `<time datetime>`."""
    return f"{at.isoformat()[:19]}Z"


def json_time(at: datetime) -> str:
    """A time as the data repository's records write it (pydantic's JSON form)."""
    return at.isoformat().replace("+00:00", "Z")


def options(values: Mapping[str, JsonValue]) -> str:
    """An agent's options as `name=value`, values in compact JSON."""
    if not values:
        return "defaults"
    return ", ".join(
        f"{name}={json.dumps(value, separators=(',', ':'), sort_keys=True)}"
        for name, value in sorted(values.items())
    )


def reward(value: float | None) -> str:
    """One trial's reward; an errored trial has none (it counts 0)."""
    if value is None:
        return "error"
    return f"{value:.0f}" if value in (0.0, 1.0) else f"{value:.3f}"


def source_label(source_type: SourceType) -> str:
    return SOURCE_LABELS[source_type]


RUNNER_LABELS: Mapping[str, str] = {
    "github-hosted": "GitHub-hosted runner",
    "self-hosted": "self-hosted runner",
}


def runner(kind: str | None) -> str:
    """The kind of Actions runner, as the verified claims name it."""
    return NONE if kind is None else RUNNER_LABELS.get(kind, kind)


FILTERS = {
    "score": score,
    "on_scale": on_scale,
    "interval": interval,
    "usd": usd,
    "count": count,
    "duration": duration,
    "when": when,
    "day": day,
    "iso": iso,
    "options": options,
    "reward": reward,
    "source_label": source_label,
    "runner": runner,
}
"""The formatters, as the templates' filters."""

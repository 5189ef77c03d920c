"""Charts drawn at build time as inline SVG: score against cost with the Pareto frontier
(a board), and score over time (an entry).

Pure functions from points to SVG text. Every chart is an image to assistive technology,
named by its `<title>` and described by a `<desc>` that states what it shows in words;
colours come from the site's stylesheet through classes, so the palette lives in one file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from sitebuild.html import Markup, html, join

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 48, 16, 48
"""The plot area's margins: room for tick labels and axis titles."""

DAY = 86_400.0
DAY_STEPS = (1, 2, 7, 14, 30, 61, 91, 182, 365, 730)
"""Spacing of date ticks in days; the smallest that gives at most six ticks is used."""

Format = Callable[[float], str]


@dataclass(frozen=True)
class Point:
    """A point to plot, with its label, shown as the point's tooltip.

    Points carry no links: a chart is one image to assistive technology, so the table
    beside it holds the links.
    """

    x: float
    y: float
    label: str


def pareto_frontier(points: Sequence[Point]) -> list[Point]:
    """The points no other point beats: none has a cost as low and a score as high, one
    of the two strictly. Cheapest first, so scores rise along the frontier."""
    frontier: list[Point] = []
    for point in sorted(points, key=lambda p: (p.x, -p.y)):
        last = frontier[-1] if frontier else None
        if last is None or point.y > last.y or (point.y == last.y and point.x == last.x):
            frontier.append(point)
    return frontier


MIN_SPAN = 1e-9
"""Below this fraction of the values' size, a range is treated as a single value."""


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values from at or below `low` to at or above `high`: steps of 1, 2 or 5
    times a power of ten, about `count` of them."""
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("ticks need finite bounds")
    # A span too small to divide (equal values, or float dust) gets a unit-wide axis.
    if high - low <= MIN_SPAN * max(1.0, abs(low), abs(high)):
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    digits = max(0, 2 - math.floor(math.log10(step)))  # round away float noise, no more

    def tick(i: int) -> float:
        return round(i * step, digits)

    first, last = math.floor(low / step), math.ceil(high / step)
    # low / step may land a hair off an integer; settle on the ticks that just cover.
    first += tick(first + 1) <= low
    first -= tick(first) > low
    last -= tick(last - 1) >= high
    last += tick(last) < high
    return [tick(i) for i in range(first, last + 1)]


def day_ticks(low: float, high: float) -> list[float]:
    """Midnight-UTC timestamps covering [low, high], at most six of them."""
    first_day = math.floor(low / DAY)
    last_day = max(math.ceil(high / DAY), first_day + 1)
    span = last_day - first_day
    step = next((s for s in DAY_STEPS if span / s <= 5), DAY_STEPS[-1])
    last_day = first_day + math.ceil(span / step) * step
    return [d * DAY for d in range(first_day, last_day + 1, step)]


def score_cost_chart(
    points: Sequence[Point],
    *,
    chart_id: str,
    title: str,
    x_label: str,
    x_format: Format,
    y_label: str,
    y_top: float,
    y_format: Format,
) -> Markup:
    """Each entry's score against its cost per task, the Pareto frontier drawn as a line
    through the entries that no cheaper entry outscores. Scores run from 0 to `y_top`
    (the metric's full scale) or the best score, whichever is higher."""
    frontier = pareto_frontier(points)
    on_frontier = set(frontier)
    best = ", ".join(f"{p.label} ({x_format(p.x)}, {y_format(p.y)})" for p in frontier)
    desc = (
        f"{len(points)} entries plotted by {x_label.lower()} and {y_label.lower()}. "
        f"The Pareto frontier, from cheapest to best: {best}."
    )
    x_ticks = tuple(nice_ticks(0.0, max((p.x for p in points), default=0.0) or 1.0))
    y_ticks = _score_ticks(points, y_top)
    xs, ys = _scale(x_ticks, LEFT, WIDTH - RIGHT), _scale(y_ticks, HEIGHT - BOTTOM, TOP)
    body = [
        _axes(x_ticks, y_ticks, x_label=x_label, y_label=y_label, x_format=x_format,
              y_format=y_format)
    ]  # fmt: skip
    if len(frontier) > 1:
        line = " ".join(f"{xs(p.x):.1f},{ys(p.y):.1f}" for p in frontier)
        body.append(html('<polyline class="frontier" points="{line}"/>', line=line))
    for point in points:
        kind = "point frontier-point" if point in on_frontier else "point"
        tip = f"{point.label}: {y_format(point.y)} at {x_format(point.x)}"
        body.append(_mark(point, xs, ys, kind, tip))
    for point in frontier:
        # Name the frontier's entries; the rest are in the table and the tooltips.
        x, y = xs(point.x), ys(point.y)
        if x > LEFT + (WIDTH - LEFT - RIGHT) * 0.7:
            body.append(_text(x - 8, y - 8, point.label, "end", "point-label"))
        else:
            body.append(_text(x + 8, y - 8, point.label, "start", "point-label"))
    return _svg(chart_id, title, desc, body)


def score_time_chart(
    runs: Sequence[tuple[datetime, float, str]],
    *,
    chart_id: str,
    title: str,
    y_label: str,
    y_top: float,
    y_format: Format,
) -> Markup:
    """Each run's score at the time it was published, joined in time order."""
    points = [Point(at.timestamp(), score, label) for at, score, label in sorted(runs)]
    listed = "; ".join(f"{p.label} on {_day(p.x)}: {y_format(p.y)}" for p in points)
    desc = f"{len(points)} runs by publication date and {y_label.lower()}: {listed}."
    times = [p.x for p in points] or [0.0]
    x_ticks = tuple(day_ticks(min(times), max(times)))
    y_ticks = _score_ticks(points, y_top)
    xs, ys = _scale(x_ticks, LEFT, WIDTH - RIGHT), _scale(y_ticks, HEIGHT - BOTTOM, TOP)
    body = [
        _axes(x_ticks, y_ticks, x_label="Published", y_label=y_label, x_format=_day,
              y_format=y_format)
    ]  # fmt: skip
    if len(points) > 1:
        line = " ".join(f"{xs(p.x):.1f},{ys(p.y):.1f}" for p in points)
        body.append(html('<polyline class="trend" points="{line}"/>', line=line))
    for point in points:
        tip = f"{point.label}: {y_format(point.y)} on {_day(point.x)}"
        body.append(_mark(point, xs, ys, "point", tip))
    return _svg(chart_id, title, desc, body)


def _score_ticks(points: Sequence[Point], y_top: float) -> tuple[float, ...]:
    low = min(0.0, *(p.y for p in points)) if points else 0.0
    return tuple(nice_ticks(low, max(y_top, *(p.y for p in points)) if points else y_top))


def _scale(ticks: Sequence[float], start: float, end: float) -> Callable[[float], float]:
    """The linear map from the ticks' range onto [start, end] in the picture."""
    low, high = ticks[0], ticks[-1]
    return lambda value: start + (value - low) / (high - low) * (end - start)


@lru_cache(maxsize=256)
def _axes(
    x_ticks: tuple[float, ...],
    y_ticks: tuple[float, ...],
    *,
    x_label: str,
    y_label: str,
    x_format: Format,
    y_format: Format,
) -> Markup:
    # Cached: the entries of a board mostly share their axes, and a site draws thousands.
    xs, ys = _scale(x_ticks, LEFT, WIDTH - RIGHT), _scale(y_ticks, HEIGHT - BOTTOM, TOP)
    parts = [Markup('<g class="axes" aria-hidden="true">')]
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    for tick in y_ticks:
        y = f"{ys(tick):.1f}"
        parts.append(
            html('<line class="grid" x1="{x0}" x2="{x1}" y1="{y}" y2="{y}"/>', x0=x0, x1=x1, y=y)
        )
        parts.append(_text(x0 - 6, ys(tick) + 4, y_format(tick), "end"))
    for tick in x_ticks:
        x = f"{xs(tick):.1f}"
        parts.append(
            html('<line class="grid" x1="{x}" x2="{x}" y1="{y1}" y2="{y0}"/>', x=x, y0=y0, y1=y1)
        )
        parts.append(_text(xs(tick), y0 + 16, x_format(tick), "middle"))
    parts.append(_text((x0 + x1) / 2, HEIGHT - 8, x_label, "middle", "axis-title"))
    middle = (y0 + y1) / 2
    parts.append(
        html(
            '<text class="axis-title" transform="translate(14 {middle}) rotate(-90)" '
            'text-anchor="middle">{label}</text>',
            middle=f"{middle:.0f}",
            label=y_label,
        )
    )
    parts.append(Markup("</g>"))
    return join(parts)


def _text(x: float, y: float, text: str, anchor: str, css: str = "tick") -> Markup:
    return html(
        '<text class="{css}" x="{x}" y="{y}" text-anchor="{anchor}">{text}</text>',
        css=css, x=f"{x:.1f}", y=f"{y:.1f}", anchor=anchor, text=text,
    )  # fmt: skip


def _mark(
    point: Point,
    xs: Callable[[float], float],
    ys: Callable[[float], float],
    kind: str,
    tip: str,
) -> Markup:
    return html(
        '<circle class="{kind}" cx="{cx}" cy="{cy}" r="5"><title>{tip}</title></circle>',
        kind=kind, cx=f"{xs(point.x):.1f}", cy=f"{ys(point.y):.1f}", tip=tip,
    )  # fmt: skip


def _svg(chart_id: str, title: str, desc: str, body: list[Markup]) -> Markup:
    return html(
        '<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="{id}-title {id}-desc" xmlns="http://www.w3.org/2000/svg">'
        '<title id="{id}-title">{title}</title>'
        '<desc id="{id}-desc">{desc}</desc>'
        "{body}</svg>",
        width=WIDTH, height=HEIGHT, id=chart_id, title=title, desc=desc, body=join(body),
    )  # fmt: skip


@lru_cache(maxsize=4096)
def _day(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d")

"""The SVG charts: the Pareto frontier is exactly the undominated points, ticks cover
their range, and every chart names and describes itself."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from sitebuild.charts import (
    Point,
    day_ticks,
    nice_ticks,
    pareto_frontier,
    score_cost_chart,
    score_time_chart,
)
from sitebuild.format import number, usd

SVG = "{http://www.w3.org/2000/svg}"

coords = st.floats(min_value=0, max_value=1000, allow_nan=False, allow_infinity=False)
points = st.lists(
    st.builds(Point, x=coords, y=coords, label=st.text(min_size=1, max_size=8)), max_size=30
)


def dominates(a: Point, b: Point) -> bool:
    return a.x <= b.x and a.y >= b.y and (a.x < b.x or a.y > b.y)


@given(points)
def test_the_frontier_is_exactly_the_points_no_other_point_dominates(pts: list[Point]) -> None:
    frontier = pareto_frontier(pts)
    undominated = [p for p in pts if not any(dominates(q, p) for q in pts)]
    assert sorted(frontier, key=repr) == sorted(undominated, key=repr)


@given(points)
def test_the_frontier_runs_from_cheapest_to_best(pts: list[Point]) -> None:
    frontier = pareto_frontier(pts)
    for before, after in itertools.pairwise(frontier):
        assert before.x <= after.x and before.y <= after.y


def test_a_frontier_by_hand() -> None:
    cheap, middle, best, worse = (Point(1, 30, "a"), Point(2, 60, "b"), Point(5, 75, "c"),
                                  Point(4, 40, "d"))  # fmt: skip
    assert pareto_frontier([best, worse, cheap, middle]) == [cheap, middle, best]


@given(coords, coords)
def test_ticks_are_round_and_cover_the_range(low: float, high: float) -> None:
    low, high = min(low, high), max(low, high)
    ticks = nice_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high
    assert 2 <= len(ticks) <= 12
    steps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(steps) - min(steps) <= 1e-9 * max(steps)


def test_date_ticks_fall_on_midnight_and_cover_the_runs() -> None:
    low = datetime(2026, 9, 28, 9, 30, tzinfo=UTC).timestamp()
    high = datetime(2026, 10, 19, 18, 0, tzinfo=UTC).timestamp()
    ticks = day_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high and len(ticks) <= 6
    assert all(t % 86_400 == 0 for t in ticks)


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # noqa: S314 - our own output, parsed to check its shape


def test_the_cost_chart_names_describes_and_escapes() -> None:
    svg = score_cost_chart(
        [Point(0.1, 40, "a<b>&c"), Point(0.3, 80, "d"), Point(0.5, 60, "e")],
        chart_id="cost", title="Score against cost", x_label="Cost per task (USD)",
        x_format=usd, y_label="Score", y_top=100, y_format=number,
    )  # fmt: skip
    root = parse(svg)
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "cost-title cost-desc"
    assert root.find(f"{SVG}title").text == "Score against cost"  # type: ignore[union-attr]
    desc = root.find(f"{SVG}desc").text or ""  # type: ignore[union-attr]
    assert "a<b>&c ($0.100, 40), d ($0.300, 80)" in desc  # the frontier, cheapest first
    frontier = root.find(f"{SVG}polyline")
    assert frontier is not None and len(frontier.get("points", "").split()) == 2
    circles = root.findall(f"{SVG}circle")
    assert [c.get("class") for c in circles] == [
        "point frontier-point", "point frontier-point", "point",
    ]  # fmt: skip
    assert all(c.find(f"{SVG}title") is not None for c in circles)


def test_the_time_chart_joins_runs_in_time_order() -> None:
    runs = [(datetime(2026, 10, 3, tzinfo=UTC), 0.5, "r2"),
            (datetime(2026, 10, 1, tzinfo=UTC), 0.25, "r1")]  # fmt: skip
    root = parse(score_time_chart(runs, chart_id="t", title="Over time", y_label="Score",
                                  y_top=1, y_format=number))  # fmt: skip
    desc = root.find(f"{SVG}desc").text or ""  # type: ignore[union-attr]
    assert desc.index("r1 on 2026-10-01: 0.25") < desc.index("r2 on 2026-10-03: 0.5")
    line = root.find(f"{SVG}polyline")
    assert line is not None
    (x1, y1), (x2, y2) = (tuple(map(float, p.split(","))) for p in line.get("points", "").split())
    assert x1 < x2 and y1 > y2  # later and higher (SVG's y grows downwards)

"""How values read on the site."""

from __future__ import annotations

from sitebuild.format import count, duration, interval, options, reward, score, usd


def test_scores_follow_the_metric_scale() -> None:
    assert score(0.8, "percent") == "80.0"
    assert score(0.8, "fraction") == "0.800"
    assert score(None, "percent") == "—"
    assert interval(0.5, 0.75, "percent") == "50.0\N{EN DASH}75.0"
    assert interval(None, None, "percent") == ""


def test_money_tokens_rewards_and_options() -> None:
    assert [usd(v) for v in (0, 0.0042, 0.27, 12.5)] == ["$0", "$0.0042", "$0.270", "$12.50"]
    assert [count(v) for v in (None, 950, 12_345, 4_560_000)] == ["—", "950", "12.3k", "4.56M"]
    assert [reward(v) for v in (None, 0.0, 1.0, 0.25)] == ["error", "0", "1", "0.250"]
    assert options({}) == "defaults"
    assert options({"temperature": 0, "tools": ["a", "b"]}) == 'temperature=0, tools=["a","b"]'


def test_durations_read_short() -> None:
    assert [duration(v) for v in (0, 0.44, 9.96, 44.6, 60, 187, 3599, 3600, 7530)] == [
        "0.0 s", "0.4 s", "10 s", "45 s", "1 min 00 s", "3 min 07 s", "59 min 59 s",
        "1 h 00 min", "2 h 05 min",
    ]  # fmt: skip

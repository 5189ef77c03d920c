"""The pure core: a run's status at a time, the limits' messages, and the spec's parts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db.models import IssuedRunStatus
from app.registry import default_registry
from app.runs.policy import Usage, limit_problems, when
from app.runs.spec import run_environment
from app.runs.status import effective_status, is_waiting
from registry.schema import Limits

NOW = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)


@pytest.mark.parametrize(
    ("stored", "expires_at", "seen"),
    [
        (IssuedRunStatus.ISSUED, LATER, IssuedRunStatus.ISSUED),
        (IssuedRunStatus.ISSUED, NOW, IssuedRunStatus.EXPIRED),
        (IssuedRunStatus.ISSUED, NOW - timedelta(seconds=1), IssuedRunStatus.EXPIRED),
        (IssuedRunStatus.UPLOADED, NOW - timedelta(days=3), IssuedRunStatus.UPLOADED),
        (IssuedRunStatus.ABANDONED, LATER, IssuedRunStatus.ABANDONED),
        (IssuedRunStatus.EXPIRED, LATER, IssuedRunStatus.EXPIRED),
    ],
)
def test_a_run_waiting_past_its_expiry_is_expired(
    stored: IssuedRunStatus, expires_at: datetime, seen: IssuedRunStatus
) -> None:
    assert effective_status(stored, expires_at, NOW) is seen
    assert is_waiting(stored, expires_at, NOW) is (seen is IssuedRunStatus.ISSUED)


def test_no_limit_is_reached_below_the_limits() -> None:
    board = default_registry().boards["hbench-demo"]
    usage = Usage(issued_last_day=[NOW] * 3, waiting_until=[LATER] * 2)
    assert limit_problems(board, usage, NOW) == []


def test_both_limits_say_when_the_next_slot_frees() -> None:
    limits = Limits(runs_per_day=2, runs_waiting=1)
    board = default_registry().boards["hbench-demo"].model_copy(update={"limits": limits})
    # Three runs in the window where two fit: the second-oldest must leave first.
    issued = [NOW - timedelta(hours=h) for h in (1, 20, 5)]
    usage = Usage(issued_last_day=issued, waiting_until=[LATER, LATER + timedelta(hours=2)])

    daily, waiting = limit_problems(board, usage, NOW)

    assert daily.code == "run-limit-daily"
    assert "frees at 2026-10-31 07:00 UTC (in 19 h 0 min)" in daily.message
    assert waiting.code == "run-limit-waiting"
    assert "expires at 2026-10-30 15:00 UTC (in 3 h 0 min)" in waiting.message


def test_when_rounds_up_to_the_minute() -> None:
    assert when(NOW + timedelta(seconds=30), NOW) == "at 2026-10-30 12:00 UTC (in 1 min)"
    assert when(NOW, NOW) == "at 2026-10-30 12:00 UTC (in 0 min)"


def test_the_environment_names_the_providers_variable() -> None:
    assert [v.name for v in run_environment(None)] == ["HARBOR_TELEMETRY"]
    (_, key) = run_environment("anthropic/claude-sonnet-4-5")
    assert (key.name, key.value, key.secret) == ("ANTHROPIC_API_KEY", None, True)
    (_, base) = run_environment("hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct")
    assert (base.name, base.secret) == ("HOSTED_VLLM_API_BASE", False)
    assert len(run_environment("someone/else")) == 1

"""Fuzzing: a quick sample of each target in the normal test run, the long run on demand.

    HBENCH_FUZZ_EXAMPLES=10000 .venv/bin/pytest tests/fuzz tests/app/uploads -k fuzz

Each target's outcome is one of its documented ones (a result, or an `HbenchError`
whose code is in the rule catalogue); any other exception is a failure hypothesis
shrinks to a small example.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.app.bench.conftest import sealed

__all__ = ["fuzz_settings", "sealed"]

LONG_RUN = int(os.environ.get("HBENCH_FUZZ_EXAMPLES", "0"))


def fuzz_settings(sample: int, *, most: int | None = None) -> settings:
    """`sample` cases in the normal run (fewer for targets that write files), or as many
    as `HBENCH_FUZZ_EXAMPLES` asks for, up to `most` for a test whose cases are huge."""
    long_run = min(LONG_RUN, most) if LONG_RUN and most else LONG_RUN
    return settings(
        max_examples=long_run or sample,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )

"""What the consistency checks share: when two records of one number agree, how many names
a message lists, and the fix every disagreement's message ends with."""

from __future__ import annotations

import math

MAX_NAMED = 5

RERUN = "Upload the job exactly as Harbor wrote it, or run the benchmark again for a new result"


def close(a: float | None, b: float | None) -> bool:
    """Whether two recorded numbers are one, but for float rounding; None matches only None."""
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)

"""The load test drives the service with the code of `bench/load.py`, importable from here.

The benchmarks are scripts, run as `python bench/<name>.py`, so they import one another
by module name; the folder goes at the end of the path so nothing else is shadowed.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))

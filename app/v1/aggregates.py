"""`GET /v1/bench/reproduced`: runs summarised per benchmark, model and harness, and the
in-process cache that answers the same question for 60 seconds.

The summary is pure; the cache is this process's own, and it reads the time from the
service's clock, so a test moves time rather than waiting.
"""

from __future__ import annotations

import statistics
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.v1.schemas import ReproducedAggregate, ReproducedList, timestamp

CACHE_TTL = timedelta(seconds=60)


@dataclass(frozen=True)
class Scored:
    """What the summary needs of one run."""

    benchmark: str
    model: str
    harness: str
    score: float
    at: datetime


def aggregate(runs: Iterable[Scored]) -> list[ReproducedAggregate]:
    """Count, median, mean, min, max and latest time of each benchmark, model and harness."""
    groups: dict[tuple[str, str, str], list[Scored]] = defaultdict(list)
    for run in runs:
        groups[(run.benchmark, run.model, run.harness)].append(run)
    return [
        ReproducedAggregate(
            benchmark_slug=benchmark,
            model_slug=model,
            harness=harness,
            run_count=len(group),
            median=statistics.median(r.score for r in group),
            mean=statistics.fmean(r.score for r in group),
            min=min(r.score for r in group),
            max=max(r.score for r in group),
            last_run_at=timestamp(max(r.at for r in group)),
        )
        for (benchmark, model, harness), group in sorted(groups.items())
    ]


CacheKey = tuple[str | None, str | None]


class ReproducedCache:
    """Answers kept for `CACHE_TTL` per query (`benchmark`, `model`), in this process."""

    def __init__(self, ttl: timedelta = CACHE_TTL) -> None:
        self._ttl = ttl
        self._lock = threading.Lock()
        self._answers: dict[CacheKey, ReproducedList] = {}
        self._times: dict[CacheKey, datetime] = {}

    def get(
        self, key: CacheKey, now: datetime, compute: Callable[[], list[ReproducedAggregate]]
    ) -> ReproducedList:
        """The cached answer while it is fresh, or a new one computed now."""
        with self._lock:
            at = self._times.get(key)
            if at is not None and at <= now < at + self._ttl:
                return self._answers[key]
        answer = ReproducedList(data=compute(), cached_at=timestamp(now))
        with self._lock:
            self._answers[key], self._times[key] = answer, now
            # Expired answers are dropped as new ones arrive, so the cache holds at most
            # the queries of the last minute.
            for stale in [k for k, t in self._times.items() if now >= t + self._ttl]:
                del self._answers[stale], self._times[stale]
        return answer

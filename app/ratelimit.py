"""Sliding-window rate limits kept in the database, so any replica sees every request.

`decide` is the pure rule: a bucket (an address, an account) may take a request while it
holds fewer hits than its limit within its window. `check_and_record` is the edge: it reads
each bucket's recent hits, prunes older ones, and records a hit in every bucket when the
request is allowed, in the caller's transaction, so a refused or failed request counts for
nothing.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session

from app.db.models import RateLimitHit


@dataclass(frozen=True)
class Limit:
    """At most `limit` requests in any `window`, for one bucket."""

    bucket: str
    limit: int
    window: timedelta


@dataclass(frozen=True)
class Decision:
    """Whether the request may go ahead; if not, which buckets are full and when the
    first of them frees a slot."""

    allowed: bool
    full: tuple[str, ...] = ()
    retry_after: timedelta | None = None


def decide(
    limits: Sequence[Limit], hits: Mapping[str, Sequence[datetime]], now: datetime
) -> Decision:
    """The decision for a request, given each bucket's hits (any order, any age)."""
    full: list[str] = []
    waits: list[timedelta] = []
    for limit in limits:
        recent = sorted(at for at in hits.get(limit.bucket, ()) if at > now - limit.window)
        if len(recent) >= limit.limit:
            full.append(limit.bucket)
            # A slot frees when enough of the oldest hits leave the window to go under.
            freeing = recent[len(recent) - limit.limit]
            waits.append(freeing + limit.window - now)
    if not full:
        return Decision(True)
    return Decision(False, tuple(full), max(waits))


def address_bucket(prefix: str, address: str | None) -> str:
    """A bucket for a client address, kept as a digest: the table never holds an address."""
    digest = hashlib.sha256((address or "unknown").encode()).hexdigest()[:32]
    return f"{prefix}:ip:{digest}"


def check_and_record(session: Session, limits: Sequence[Limit], now: datetime) -> Decision:
    """Decide on a request and, when it is allowed, count it in every bucket (uncommitted)."""
    buckets = sorted({limit.bucket for limit in limits})
    if session.get_bind().dialect.name == "postgresql":
        # Replicas checking one bucket at once queue here until the first commits, so two
        # requests can't both take its last slot. Sorted, so two buckets never deadlock.
        for bucket in buckets:
            session.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": zlib.crc32(bucket.encode())}
            )
    widest = max((limit.window for limit in limits), default=timedelta(0))
    session.execute(
        delete(RateLimitHit).where(
            RateLimitHit.bucket.in_(buckets), RateLimitHit.at <= now - widest
        )
    )
    hits: dict[str, list[datetime]] = {bucket: [] for bucket in buckets}
    rows = session.execute(
        select(RateLimitHit.bucket, RateLimitHit.at).where(RateLimitHit.bucket.in_(buckets))
    )
    for bucket, at in rows:
        hits[bucket].append(at)
    decision = decide(limits, hits, now)
    if decision.allowed:
        session.add_all(RateLimitHit(bucket=bucket, at=now) for bucket in buckets)
        session.flush()
    return decision

"""Benchmark: issuing runs (`POST /api/local-runs`) against a route that does nothing,
in the same app, served the same way, by as many concurrent clients.

The service runs in its own process on loopback (SQLite in a fresh state folder, or
PostgreSQL with `--database-url`), built as `hbench-app serve` builds it, with one more
route, `GET /bench/noop`, that answers without touching anything: the floor of what the
server, the framework and the clients cost. Rounds alternate between the two, so load from
anything else on the machine weighs on both alike; the figures are medians over rounds.
Each issue signs in with an API token, checks the registry's policy and the board's
limits, and writes the run: many accounts share the work so no board limit is reached.

    .venv/bin/python bench/issue_throughput.py
    .venv/bin/python bench/issue_throughput.py --requests 2000 --clients 50 --rounds 5

The goals (issue 20): issuing answers at least half the no-op route's requests per
second, with a p99 latency under 100 ms, at 20 clients. Exits 1 when any request is not
answered with success or a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
from report import Row, emit, median, percentile
from service import NOOP_PATH, make_tokens, running_service

BOARDS = ("hbench-demo", "hbench-demo-quick")
PER_ACCOUNT_BOARD = 5
"""Runs issued per account and board: the boards' waiting limit, well under their daily one."""
THROUGHPUT_GOAL = 0.5
"""Issuing's requests per second, at least this share of the no-op route's."""
P99_GOAL_MS = 100.0


Request = tuple[str, str, dict[str, object] | None, str | None]
"""Method, path, JSON body, API token."""


@dataclass(frozen=True)
class Round:
    """One round of one endpoint: requests answered per second, and each one's latency."""

    throughput: float
    latencies: list[float]
    failures: list[str]


async def hammer(url: str, requests: Sequence[Request], clients: int) -> Round:
    """Send the requests (method, path, body, token) with `clients` at a time."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    queue: asyncio.Queue[Request] = asyncio.Queue()
    for request in requests:
        queue.put_nowait(request)
    latencies: list[float] = []
    failures: list[str] = []
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:

        async def worker() -> None:
            while not queue.empty():
                method, path, body, token = queue.get_nowait()
                headers = {"authorization": f"Bearer {token}"} if token else {}
                start = time.perf_counter()
                answer = await client.request(method, path, json=body, headers=headers)
                latencies.append(time.perf_counter() - start)
                if answer.status_code >= 300:
                    failures.append(f"{method} {path}: {answer.status_code} {answer.text[:300]}")

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - started
    return Round(len(requests) / wall, latencies, failures)


def issue_requests(tokens: list[str], count: int) -> list[Request]:
    """`count` issue requests, spread over accounts and boards, none past a limit."""
    tickets = [(token, board) for board in BOARDS for token in tokens] * PER_ACCOUNT_BOARD
    if len(tickets) < count:
        raise ValueError(f"{len(tokens)} accounts can be issued {len(tickets)} runs, not {count}")
    body = {"declarative": {"agent": "oracle"}}
    return [
        ("POST", "/api/local-runs", {"arena": board, **body}, token)
        for token, board in tickets[:count]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="per round and endpoint")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args(argv)
    per_round = -(-args.requests // (len(BOARDS) * PER_ACCOUNT_BOARD))
    noop: list[Round] = []
    issue: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="bench-issue-") as scratch:
        state = Path(scratch) / "state"
        with running_service(state, database_url=args.database_url, noop=True) as service:
            logins = [f"bench-{n}" for n in range(per_round * (args.rounds + 1))]
            tokens = list(make_tokens(service.database_url, logins).values())
            warm = [("GET", NOOP_PATH, None, None)] * args.clients
            asyncio.run(hammer(service.url, warm, args.clients))
            # And issuing, by accounts of their own: its first request waits for what the
            # service makes once (the redaction engine the issued spec goes through).
            spare = tokens[args.rounds * per_round :]
            asyncio.run(hammer(service.url, issue_requests(spare, args.clients), args.clients))
            for n in range(args.rounds):
                floor = [("GET", NOOP_PATH, None, None)] * args.requests
                noop.append(asyncio.run(hammer(service.url, floor, args.clients)))
                mine = tokens[n * per_round : (n + 1) * per_round]
                issue.append(
                    asyncio.run(
                        hammer(service.url, issue_requests(mine, args.requests), args.clients)
                    )
                )
    return report(noop, issue, args)


def report(noop: list[Round], issue: list[Round], args: argparse.Namespace) -> int:
    backend = "PostgreSQL" if args.database_url else "SQLite"
    figures = {}
    for name, rounds in (("no-op route", noop), ("issue a run", issue)):
        ms = [latency * 1000 for r in rounds for latency in r.latencies]
        figures[name] = (median(r.throughput for r in rounds), median(ms), percentile(ms, 0.99))
    print(f"\n{args.clients} clients, {args.requests} requests per round, medians of "
          f"{args.rounds} alternating rounds; service on loopback, {backend}\n")  # fmt: skip
    print(f"{'':<14}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for name, (rate, p50, p99) in figures.items():
        print(f"{name:<14}{rate:>9.1f}{p50:>9.1f}{p99:>9.1f}")
    (issue_rate, issue_p50, issue_p99), (noop_rate, noop_p50, noop_p99) = (
        figures["issue a run"], figures["no-op route"]
    )  # fmt: skip
    share, fast = issue_rate / noop_rate, issue_p99 < P99_GOAL_MS
    print(f"\nissuing answers {share:.2f}x the no-op route's requests per second (goal: at "
          f"least {THROUGHPUT_GOAL}x) -> {verdict(share >= THROUGHPUT_GOAL)}; its p99 is "
          f"{issue_p99:.0f} ms (goal: under {P99_GOAL_MS:.0f} ms) -> {verdict(fast)}")  # fmt: skip
    emit(
        [
            Row("issue", "issue throughput", issue_rate, "req/s", "no-op route", noop_rate,
                f"≥{THROUGHPUT_GOAL}x"),
            Row("issue", "issue latency p50", issue_p50, "ms", "no-op route", noop_p50),
            Row("issue", "issue latency p99", issue_p99, "ms", "no-op route", noop_p99,
                f"<{P99_GOAL_MS:.0f} ms"),
        ]
    )  # fmt: skip
    failures = [f for r in (*noop, *issue) for f in r.failures]
    if failures:
        print(f"\n{len(failures)} requests failed, the first: {failures[0]}")
        return 1
    return 0 if share >= THROUGHPUT_GOAL and fast else 1


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


if __name__ == "__main__":
    sys.exit(main())

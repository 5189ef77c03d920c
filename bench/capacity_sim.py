"""Simulation: a day of the capacity model's mix at 1/1000 scale, compressed in time,
against the real served service; its total CPU beside the model's prediction.

The day is the middle scenario of `bench/capacity.py` (100,000 uploads and 100M page
views a month), scaled by `SIM_SCALE`: each kind of request as many times as the model's
mix says, sent at random times over `--seconds` (86.4 s, the day compressed 1000x, so at
the day's mean rates). The service is deployed as `bench/request_cost.py` deploys it (the
same database, bucket and process), warmed the same way. The prediction is the model's:
the requests' CPU per request from the costs file `bench/request_cost.py` wrote, plus
the idle service's CPU rate over the wall time; the measurement is the service's CPU
(its process and everything under it) over the same time, until what the requests left
behind has settled.

    .venv/bin/python bench/capacity_sim.py      # reads bench/results/request_cost.json

The goal: measured within 25% of predicted. Exits 1 when it is not, or a request fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path

import httpx
from capacity import COSTS, PAGE_VIEWS_PER_MONTH, SIM, SIM_SCALE, SIM_UPLOADS_PER_DAY, daily_mix
from issue_throughput import issue_requests
from load import POSTGRES_SERVER
from report import Row, emit
from request_cost import (
    Costs,
    Deployment,
    Fixture,
    deployment,
    load_costs,
    make_fixture,
)

GOAL = 0.25
IN_FLIGHT = 50
"""Requests the replay has open at once, at most."""


def counts_for(costs: Costs) -> dict[str, int]:
    """The scaled day: how many of each kind of request."""
    mix = daily_mix(costs, SIM_UPLOADS_PER_DAY, PAGE_VIEWS_PER_MONTH)
    return {op: round(n * SIM_SCALE) for op, n in mix.items()}


def schedule(counts: dict[str, int], seconds: float, seed: int = 7) -> list[tuple[float, str]]:
    """Each request's kind at a uniformly random time in the compressed day, in order."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible schedule
    events = [(rng.uniform(0, seconds), op) for op, n in counts.items() for _ in range(n)]
    return sorted(events)


class Replay:
    """Sends each kind of request as `bench/request_cost.py` measured it."""

    def __init__(self, http: httpx.AsyncClient, fixture: Fixture, counts: dict[str, int]):
        self.http, self.fixture = http, fixture
        self.issues = issue_requests(fixture.issuers[:-1], counts["issue"])  # the last: warm
        self.to_publish = list(fixture.to_publish)
        self.failures: list[str] = []
        self.rng = random.Random(11)  # noqa: S311

    def request(self, op: str) -> Awaitable[httpx.Response]:
        f = self.fixture
        owner = {"authorization": f"Bearer {f.owner}"}
        gzip = {**owner, "content-type": "application/gzip"}
        if op == "issue":
            _, path, body, token = self.issues.pop()
            return self.http.post(path, json=body, headers={"authorization": f"Bearer {token}"})
        if op == "list jobs":
            return self.http.get("/api/bench/jobs", headers={"authorization": f"Bearer {f.reader}"})
        if op == "v1 runs":
            return self.http.get("/v1/runs")
        if op == "site page":
            return self.http.get(self.rng.choice(f.pages))
        if op == "publish":
            return self.http.post(f"/api/bench/jobs/{self.to_publish.pop()}/publish", headers=owner)
        archive = f.small if op == "upload small" else f.large
        return self.http.post("/api/bench/uploads", content=archive.body, headers=gzip)

    async def send(self, op: str, gate: asyncio.Semaphore) -> None:
        async with gate:
            answer = await self.request(op)
        if not answer.is_success:
            self.failures.append(f"{op}: {answer.status_code} {answer.text[:200]}")

    async def run(self, events: list[tuple[float, str]]) -> None:
        gate = asyncio.Semaphore(IN_FLIGHT)
        started = time.monotonic()
        tasks = []
        for at, op in events:
            await asyncio.sleep(max(0.0, started + at - time.monotonic()))
            tasks.append(asyncio.create_task(self.send(op, gate)))
        await asyncio.gather(*tasks)


async def replay(url: str, fixture: Fixture, counts: dict[str, int], seconds: float) -> list[str]:
    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as http:
        sender = Replay(http, fixture, counts)
        await sender.run(schedule(counts, seconds))
    return sender.failures


def warm(dep: Deployment, fixture: Fixture) -> None:
    """One request of each read and of issuing, so no first call's set-up is measured
    (the upload workers and the first publish were warmed by `make_fixture`)."""
    with httpx.Client(base_url=dep.service.url, timeout=120) as http:
        for _, path, body, token in issue_requests(fixture.issuers[-1:], 2):
            http.post(path, json=body, headers={"authorization": f"Bearer {token}"})
        http.get("/api/bench/jobs", headers={"authorization": f"Bearer {fixture.reader}"})
        http.get("/v1/runs")
        http.get(fixture.pages[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costs", type=Path, default=COSTS, help="bench/request_cost.py's")
    parser.add_argument("--seconds", type=float, default=86_400 * SIM_SCALE)
    parser.add_argument("--postgres-server", default=POSTGRES_SERVER)
    parser.add_argument("--output", type=Path, default=SIM)
    args = parser.parse_args(argv)
    costs = load_costs(args.costs)
    sqlite = costs.database == "SQLite"
    counts = counts_for(costs)
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as scratch:
        folder = Path(scratch)
        with deployment(folder, sqlite=sqlite, postgres_server=args.postgres_server) as dep:
            print("running the demo job, accounts, the first publish …", flush=True)
            fixture = make_fixture(folder, dep.service, publishes=counts["publish"],
                                   issues=counts["issue"] + 20)  # fmt: skip
            warm(dep, fixture)
            dep.settle()
            print(f"replaying {sum(counts.values())} requests over {args.seconds:.0f} s …",
                  flush=True)  # fmt: skip
            before = dep.read()
            failures = asyncio.run(replay(dep.service.url, fixture, counts, args.seconds))
            dep.settle()
            after = dep.read()
    wall = after.at - before.at
    measured = after.service - before.service
    predicted = sum(n * costs.ops[op].cpu_ms / 1000 for op, n in counts.items())
    predicted += costs.idle_cpu_per_s * wall
    return report(
        args, costs, counts, wall=wall, predicted=predicted, measured=measured, failures=failures
    )


def report(
    args: argparse.Namespace, costs: Costs, counts: dict[str, int], *, wall: float,
    predicted: float, measured: float, failures: list[str],
) -> int:  # fmt: skip
    ratio = measured / predicted
    met = abs(ratio - 1) <= GOAL and not failures
    print(f"\n{sum(counts.values())} requests over {wall:.1f} s: "
          + ", ".join(f"{op} {n}" for op, n in counts.items()))  # fmt: skip
    print(f"service CPU predicted: {predicted:.2f} s")
    print(f"service CPU measured: {measured:.2f} s")
    print(f"measured / predicted {ratio:.3f} (goal: within {GOAL:.0%}) -> "
          f"{'met' if met else 'MISSED'}")  # fmt: skip
    result = {
        "command": " ".join(["bench/capacity_sim.py", *sys.argv[1:]]),
        "seconds": args.seconds, "wall": wall, "database": costs.database,
        "counts": counts, "predicted": predicted, "measured": measured, "ratio": ratio,
        "met": met, "failures": len(failures),
    }  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    emit([Row("capacity sim", "a day at 1/1000: service CPU", measured, "s", "model's prediction",
              predicted, f"within {GOAL:.0%}")])  # fmt: skip
    if failures:
        print(f"{len(failures)} requests failed, the first: {failures[0]}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""The capacity model: what 10k, 100k and 1M uploads a day and 100M page views a month
need, from the per-request figures `bench/request_cost.py` measured; writes
docs/capacity.md, with the check `bench/capacity_sim.py` ran against the real service.

    .venv/bin/python bench/request_cost.py     # bench/results/request_cost.json
    .venv/bin/python bench/capacity_sim.py     # bench/results/capacity_sim.json
    .venv/bin/python bench/capacity.py         # docs/capacity.md

Every figure is a measured one (named by the file it comes from) or one of the named
assumptions below, each with its source.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from request_cost import Costs, WriterCost, load_costs

from app.db.session import POOL_OVERFLOW, POOL_SIZE
from app.settings import Settings

HERE = Path(__file__).resolve().parent
COSTS = HERE / "results" / "request_cost.json"
SIM = HERE / "results" / "capacity_sim.json"
DOC = HERE.parent / "docs" / "capacity.md"

# --- Assumptions: the mix of requests, and how the load is spread ----------------------------

UPLOADS_PER_DAY = (10_000, 100_000, 1_000_000)
"""The scenarios (the issue's)."""
PAGE_VIEWS_PER_MONTH = 100_000_000
"""The issue's; each scenario carries these page views too."""
DAYS_PER_MONTH = 30
"""Assumption: a month of 30 days."""
ISSUES_PER_UPLOAD = 1.0
"""Assumption: every upload is of an issued run (the Action issues, runs, uploads)."""
PUBLISH_SHARE = 0.25
"""Assumption: a quarter of the uploaded jobs are published."""
JOB_LISTS_PER_UPLOAD = 2.0
"""Assumption: `GET /api/bench/jobs` twice per upload (Your bench, `hbench` waiting)."""
V1_READS_PER_UPLOAD = 1.0
"""Assumption: `GET /v1/runs` once per upload (the runs API's readers)."""
UPLOAD_MIB = 2.0
"""Assumption: the mean archive sent, in MiB. The model interpolates between the two jobs
measured (the demo job, and the same with 24 MiB of log text): a share of each such that
the mean is this; the simulation sends that share of each."""
PEAK_TO_MEAN = 3.0
"""Assumption: the busiest hour's rate over the day's mean rate."""
TARGET_UTILISATION = 0.6
"""Assumption: cores are sized so the busiest hour keeps them at most 60% busy."""
POSTGRES_MAX_CONNECTIONS = 100
"""PostgreSQL's default `max_connections` (its documentation, "Connections and
Authentication")."""
GITHUB_PUSH_SECONDS = 1.0
"""Assumption, not measured here: the wall time of one fetch and push of the data
repository to GitHub, which the writer pays per commit instead of the local push measured."""
REPOSITORY_LIMIT_GIB = 5.0
"""GitHub's documentation ("Repository limits"): repositories under 1 GB ideally, and
under 5 GB strongly recommended."""
SIM_SCALE = 1 / 1000
"""The simulation replays the middle scenario's day at this scale (`bench/capacity_sim.py`)."""
SIM_UPLOADS_PER_DAY = UPLOADS_PER_DAY[1]


# --- The model ---------------------------------------------------------------------------------


def large_share(costs: Costs) -> float:
    """The share of uploads that are the large job, so the mean archive is `UPLOAD_MIB`."""
    small, large = costs.archives["small"]["mib"], costs.archives["large"]["mib"]
    return min(1.0, max(0.0, (UPLOAD_MIB - small) / (large - small)))


def daily_mix(costs: Costs, uploads: float, page_views_per_month: float) -> dict[str, float]:
    """Requests a day, by the kinds `bench/request_cost.py` measured."""
    large = large_share(costs)
    return {
        "issue": ISSUES_PER_UPLOAD * uploads,
        "list jobs": JOB_LISTS_PER_UPLOAD * uploads,
        "v1 runs": V1_READS_PER_UPLOAD * uploads,
        "site page": page_views_per_month / DAYS_PER_MONTH,
        "publish": PUBLISH_SHARE * uploads,
        "upload small": (1 - large) * uploads,
        "upload large": large * uploads,
    }


def cpu_seconds(costs: Costs, mix: dict[str, float], field: str = "cpu_ms") -> float:
    """CPU seconds the mix costs the service (`field="db_ms"`: its database)."""
    return sum(count * float(getattr(costs.ops[op], field)) / 1000 for op, count in mix.items())


def cores_for(cpu_seconds_per_day: float) -> float:
    """Cores that keep the busiest hour at `TARGET_UTILISATION`."""
    return cpu_seconds_per_day / 86_400 * PEAK_TO_MEAN / TARGET_UTILISATION


def per_batch(writer: list[WriterCost]) -> tuple[float, float]:
    """A commit's fixed seconds and its seconds per change, from the writer measured at two
    batch sizes (a line through the two)."""
    one, many = sorted(writer, key=lambda w: w.batch_size)
    each = (many.seconds_per_commit - one.seconds_per_commit) / (many.batch_size - one.batch_size)
    return one.seconds_per_commit - each * one.batch_size, each


def writer_rate(writer: list[WriterCost], batch: int, push_seconds: float = 0.0) -> float:
    """Publishes a second one writer applies in commits of `batch`, each also paying
    `push_seconds` of push."""
    fixed, each = per_batch(writer)
    return batch / (fixed + push_seconds + each * batch)


def commit_rate(writer: list[WriterCost], publishes: float, push_seconds: float) -> float:
    """Commits a second at a steady rate of `publishes` a second: one per publish while one
    commit takes less than the gap between publishes; past that the writer commits back
    to back, each commit carrying what arrived during the last one (a commit of b changes
    takes F + e*b, and b = publishes * (F + e*b), so it commits (1 - publishes*e) / F a
    second)."""
    fixed, each = per_batch(writer)
    fixed += push_seconds
    if publishes * (fixed + each) <= 1:
        return publishes
    return (1 - publishes * each) / fixed


def kib_per_publish(writer: list[WriterCost]) -> float:
    one, many = sorted(writer, key=lambda w: w.batch_size)
    return (many.repository_kib - one.repository_kib) / (many.publishes - one.publishes)


@dataclass(frozen=True)
class Need:
    """What one scenario needs."""

    uploads: int
    mix: dict[str, float]
    service_cores: float
    service_cores_no_site: float
    database_cores: float
    processes: int
    connections: int
    s3_requests: float
    s3_with_site: float
    commits: float
    repository_gib_per_day: float


def need(costs: Costs, uploads: int) -> Need:
    mix = daily_mix(costs, uploads, PAGE_VIEWS_PER_MONTH)
    no_site = {op: n for op, n in mix.items() if op != "site page"}
    cores = cores_for(cpu_seconds(costs, mix))
    processes = max(1, math.ceil(cores))
    per_process = POOL_SIZE + POOL_OVERFLOW + 2 * Settings.model_fields["upload_workers"].default
    s3 = sum(count * costs.ops[op].s3 for op, count in mix.items())
    commits = 86_400 * commit_rate(costs.writer, mix["publish"] / 86_400, GITHUB_PUSH_SECONDS)
    return Need(
        uploads,
        mix,
        cores,
        cores_for(cpu_seconds(costs, no_site)),
        cores_for(cpu_seconds(costs, mix, "db_ms")),
        processes,
        processes * per_process + 1,
        s3,
        s3 + mix["site page"],
        commits,
        mix["publish"] * kib_per_publish(costs.writer) / 1024**2,
    )


# --- The document ------------------------------------------------------------------------------


def fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def measured_section(costs: Costs) -> str:
    noop = costs.ops["no-op"].cpu_ms
    rows = [
        [op, fmt(c.cpu_ms), f"{c.cpu_ms / noop:.2f}x", fmt(c.db_ms), fmt(c.s3)]
        for op, c in costs.ops.items()
    ]
    tar = costs.tar_sha256_ms
    uploads = [
        [
            size,
            fmt(costs.archives[size]["mib"]),
            fmt(costs.archives[size]["unpacked_mib"]),
            f"{costs.archives[size]['files']:.0f}",
            fmt(costs.ops[f"upload {size}"].cpu_ms),
            fmt(tar[size]),
            f"{costs.ops[f'upload {size}'].cpu_ms / tar[size]:.2f}x",
        ]
        for size in ("small", "large")
    ]
    return "\n\n".join(
        [
            f"Measured by `.venv/bin/python {costs.command}` on {costs.cores} cores: the service "
            f"as `hbench-app serve`, one process, on {costs.database} and {costs.blob_store}; "
            f"medians of {costs.rounds} rounds, {costs.clients} clients. CPU is the service's "
            "process and everything under it (upload workers, the writer's git commands), idle "
            "subtracted; the database's is its backends' (read in clock ticks of 10 ms per "
            "backend, so a figure of a few ms or less per request is coarse).",
            table(["request", "service CPU ms", "x no-op", "database CPU ms", "S3 requests"], rows),
            table(
                [
                    "upload",
                    "MiB sent",
                    "MiB unpacked",
                    "files",
                    "server CPU ms",
                    "tar xzf + sha256sum CPU ms",
                    "ratio",
                ],
                uploads,
            ),
            f"The idle service uses {1000 * costs.idle_cpu_per_s:.2f} CPU ms a second (the "
            "writer's and the maintenance loop's polls).",
        ]
    )


def assumptions_section() -> str:
    names = [
        "PAGE_VIEWS_PER_MONTH",
        "DAYS_PER_MONTH",
        "ISSUES_PER_UPLOAD",
        "PUBLISH_SHARE",
        "JOB_LISTS_PER_UPLOAD",
        "V1_READS_PER_UPLOAD",
        "UPLOAD_MIB",
        "PEAK_TO_MEAN",
        "TARGET_UTILISATION",
        "POSTGRES_MAX_CONNECTIONS",
        "GITHUB_PUSH_SECONDS",
        "REPOSITORY_LIMIT_GIB",
    ]
    source = Path(__file__).read_text(encoding="utf-8")
    rows = []
    for name in names:
        after = source.split(f"\n{name} = ", 1)[1]
        value, rest = after.split("\n", 1)
        note = rest.split('"""', 2)[1].replace("\n", " ") if rest.startswith('"""') else ""
        rows.append([f"`{name}`", value, note])
    code = [
        [
            "`POOL_SIZE + POOL_OVERFLOW`",
            f"{POOL_SIZE} + {POOL_OVERFLOW}",
            "app/db/session.py: a server process's connections at most",
        ],
        [
            "upload worker connections",
            "2 each",
            "app/services.py `database_at`: pool_size=1, max_overflow=1",
        ],
        [
            "`HBENCH_UPLOAD_WORKERS`",
            str(Settings.model_fields["upload_workers"].default),
            "app/settings.py: upload workers per server process",
        ],
    ]
    return table(["name", "value", "source"], rows + code)


def needs_section(costs: Costs) -> str:
    needs = [need(costs, n) for n in UPLOADS_PER_DAY]
    header = ["per day", *(f"{n.uploads:,} uploads" for n in needs)]
    lines: list[tuple[str, Callable[[Need], str]]] = [
        ("issues", lambda n: fmt(n.mix["issue"])),
        ("publishes", lambda n: fmt(n.mix["publish"])),
        ("page views", lambda n: fmt(n.mix["site page"])),
        ("service CPU seconds", lambda n: fmt(cpu_seconds(costs, n.mix))),
        ("service cores, site served by the service", lambda n: fmt(n.service_cores)),
        ("service cores, site from object storage", lambda n: fmt(n.service_cores_no_site)),
        ("of them for page views", lambda n: fmt(n.service_cores - n.service_cores_no_site)),
        ("PostgreSQL cores (its backends' CPU)", lambda n: fmt(n.database_cores)),
        ("server processes (one per core)", lambda n: str(n.processes)),
        ("PostgreSQL connections at most", lambda n: str(n.connections)),
        ("S3 requests", lambda n: fmt(n.s3_requests)),
        ("S3 requests, site from object storage", lambda n: fmt(n.s3_with_site)),
        ("data-repository commits", lambda n: fmt(n.commits)),
        ("data-repository growth, GiB", lambda n: f"{n.repository_gib_per_day:.3f}"),
    ]
    rows = [[name, *(cell(n) for n in needs)] for name, cell in lines]
    return table(header, rows)


def writer_section(costs: Costs) -> str:
    fixed, each = per_batch(costs.writer)
    local_1, local_100 = writer_rate(costs.writer, 1), writer_rate(costs.writer, 100)
    gh_1 = writer_rate(costs.writer, 1, GITHUB_PUSH_SECONDS)
    gh_100 = writer_rate(costs.writer, 100, GITHUB_PUSH_SECONDS)
    per_day = 86_400 / (PUBLISH_SHARE * PEAK_TO_MEAN)
    kib = kib_per_publish(costs.writer)
    limit_publishes = REPOSITORY_LIMIT_GIB * 1024**2 / kib
    measured = "; ".join(
        f"batches of {w.batch_size}: {1000 * w.seconds_per_commit:.1f} ms a commit "
        f"({w.publishes} publishes, {w.commits} commits, repository {w.repository_kib:,.0f} KiB)"
        for w in costs.writer
    )
    return "\n\n".join(
        [
            f"Measured (the writer alone, `bench/publish_outbox.py`'s measure, in "
            f"`{costs.command}`): {measured}. A commit costs {1000 * fixed:.1f} ms plus "
            f"{1000 * each:.2f} ms per change (the line through the two), and the repository "
            f"grows {kib:.2f} KiB per published run, packed (publish_outbox's synthetic runs "
            "of 40 tasks).",
            table(
                ["writer", "publishes/s", "uploads/day it keeps up with at the peak"],
                [
                    ["local push, one publish a commit", fmt(local_1), fmt(local_1 * per_day)],
                    ["local push, batches of 100", fmt(local_100), fmt(local_100 * per_day)],
                    [
                        f"GitHub push ({GITHUB_PUSH_SECONDS:.0f} s), one a commit",
                        fmt(gh_1),
                        fmt(gh_1 * per_day),
                    ],
                    [
                        f"GitHub push ({GITHUB_PUSH_SECONDS:.0f} s), batches of 100",
                        fmt(gh_100),
                        fmt(gh_100 * per_day),
                    ],
                ],
            ),
            "The writer batches by itself: it commits whatever is pending, up to "
            "`HBENCH_WRITER_BATCH_SIZE` (100), so under load it moves from the first row to the "
            "second. Pushing to GitHub one publish a commit, it keeps up with "
            f"{fmt(gh_1 * per_day)} uploads a day at the peak: past that, batches form. The "
            "Needs table counts commits at the day's mean publish rate with a GitHub push: one "
            "per publish while a commit is shorter than the gap between two publishes, else "
            "back to back, each carrying what arrived during the last (`commit_rate`). Its "
            "commit rate is not what stops it first: the repository's size "
            f"is. At {kib:.2f} KiB per published run, {REPOSITORY_LIMIT_GIB:.0f} GiB holds "
            f"{fmt(limit_publishes)} published runs: "
            + ", ".join(
                f"{fmt(limit_publishes / (PUBLISH_SHARE * n))} days at {n:,} uploads a day"
                for n in UPLOADS_PER_DAY
            )
            + ". A commit's cost was measured on a repository of at most "
            f"{max(w.publishes for w in costs.writer)} runs; it grows with the checkout "
            "(the reset and the index touch every file), not measured here.",
        ]
    )


def sim_section(sim: dict[str, object] | None) -> str:
    if sim is None:
        return "Not run yet: `.venv/bin/python bench/capacity_sim.py`."
    counts = sim["counts"]
    assert isinstance(counts, dict)
    rows = [[op, str(n)] for op, n in counts.items()]
    verdict = "within" if sim["met"] else "NOT within"
    return "\n\n".join(
        [
            f"`.venv/bin/python {sim['command']}` replayed a day of the {SIM_UPLOADS_PER_DAY:,}-"
            f"upload scenario at 1/{1 / SIM_SCALE:.0f} scale, its requests at random times over "
            f"{sim['seconds']:.0f} s (the day compressed {86_400 / float(sim['seconds']):.0f}x: "  # type: ignore[arg-type]
            f"the day's mean rates), against the served service ({sim['database']}, S3 on moto):",
            table(["request", "sent"], rows),
            table(
                ["service CPU", "seconds"],
                [
                    [
                        "predicted (requests' measured costs, the idle rate over the wall time)",
                        f"{sim['predicted']:.2f}",
                    ],
                    ["measured", f"{sim['measured']:.2f}"],
                    ["ratio measured / predicted", f"{sim['ratio']:.3f}"],
                ],
            ),
            f"The measurement is {verdict} 25% of the model's prediction.",
        ]
    )


def render(costs: Costs, sim: dict[str, object] | None, causes: str) -> str:
    return (
        "\n\n".join(
            [
                "# Capacity",
                "<!-- Generated by `.venv/bin/python bench/capacity.py` from bench/results/ "
                "(bench/request_cost.py, bench/capacity_sim.py); edit bench/capacity.py, not this "
                "file. -->",
                "What the service needs for 10k, 100k and 1M uploads a day with 100M page views a "
                "month, from what one request of each kind costs, measured on the served service. "
                "Every number below is measured (with its command) or a named assumption.",
                "## Cost per request, beside its floor",
                measured_section(costs),
                "## Where the goals are missed, and why",
                causes,
                "## Assumptions",
                assumptions_section(),
                "## Needs",
                needs_section(costs),
                "Cores are CPU seconds a day over 86,400, times `PEAK_TO_MEAN`, over "
                "`TARGET_UTILISATION`; upload regrading is not in them (the benchmarks run with "
                "`HBENCH_REGRADE_ENABLED=false`; `bench/integrity.py` times it). Connections: each "
                "server process's pool at most, its upload workers' and the writer's one; past "
                f"{POSTGRES_MAX_CONNECTIONS} a pooler (PgBouncer) or a raised `max_connections` is "
                "needed. S3 requests are the ones moto logged per request.",
                "## The data repository's writer",
                writer_section(costs),
                "What takes over past it: batched commits first (already the writer's behaviour "
                "under a backlog); then sharded data repositories (boards split over several "
                "repositories, each with its own writer: the commit rate and the size limit both "
                "multiply by the shards); and the site built from the data repository and served "
                "from object storage behind a CDN (its Pages workflow), so page views cost the "
                'service nothing (the table\'s "site from object storage" rows).',
                "## The simulation's check",
                sim_section(sim),
            ]
        )
        + "\n"
    )


CAUSES = HERE / "results" / "causes.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costs", type=Path, default=COSTS)
    parser.add_argument("--sim", type=Path, default=SIM)
    parser.add_argument(
        "--causes", type=Path, default=CAUSES, help="the goals' misses and their causes (markdown)"
    )
    parser.add_argument("--output", type=Path, default=DOC)
    args = parser.parse_args(argv)
    costs = load_costs(args.costs)
    sim = json.loads(args.sim.read_text(encoding="utf-8")) if args.sim.exists() else None
    causes = args.causes.read_text(encoding="utf-8").strip() if args.causes.exists() else ""
    args.output.write_text(render(costs, sim, causes), encoding="utf-8")
    print(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

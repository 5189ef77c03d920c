"""Load test: many concurrent clients for a while against `hbench-app serve` on loopback,
issuing runs, uploading and publishing real sealed jobs, and reading lists and pages.

Each client loops until the time is up, picking its next operation at random by weight:
issue a run (`POST /api/local-runs`), upload the demo job with an API token, publish a
job of its own (upload a distinct sealed variant, then publish it), list its jobs, list
runs (`GET /v1/runs`), read a site page. Every answer must be a success: any other status,
or a request that fails, is an error. Accounts are many, so no board limit is reached
(each account and board takes at most the board's waiting limit of runs). Afterwards every
accepted upload must be listed exactly once on its owner's bench, every issued run once
in its owner's runs, and every published job's run exactly once in the data repository.

    .venv/bin/python bench/load.py                       # 100 clients for 60 s, SQLite
    .venv/bin/python bench/load.py --clients 20 --seconds 5
    .venv/bin/python bench/load.py --database-url postgresql+psycopg://…/load
    .venv/bin/python bench/load.py --database-url … --workers 2   # HBENCH_WORKERS
    .venv/bin/python bench/load.py --replicas 2 --seconds 30      # one replica, then two

With `--replicas N` it runs a deployment as docs/deployment.md lays it out, each part its
own process: one PostgreSQL database (new, on `--postgres-server`), one S3 bucket (moto's
server), the writer alone (`hbench-app data-repo write`), and replicas of `hbench-app
serve` with a state folder each, following the data repository the writer pushes to for
their sites; the clients are spread over the replicas in turn. The same load runs first
against a deployment of one replica, then against one of N, each fresh, and the second's
requests per second are compared with the first's.

The goals (issue 20): zero errors; the reads' p99 (`GET /api/bench/jobs`, `GET /v1/runs`)
under 500 ms; all requests at least 141 per second (3x the 47 measured before); with
replicas, N of them at least 1.6x (for 2) the requests per second of one.

Issue 34's goals, measured around the same load: the reads' p99 at most 10x their p50
from one client alone, sent for `--alone-seconds` before the load; and, with replicas, N
of them at least 0.9x one's requests per busy core-second (the CPU of every process this
script started and of the database's PostgreSQL backends, the load generator pinned to
its own core where there are two or more).

Exits 1 on any error, anything missing or doubled afterwards, or a goal missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from proc_cpu import PROC, Backends, pids_cpu, settle, tree
from report import Row, emit, percentile
from service import (
    BIN,
    Service,
    make_tokens,
    packed,
    run_demo_job,
    running_service,
    service_env,
    variant,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/ is not installed
from tools.moto_s3 import TEST_CREDENTIALS, moto_s3

BOARDS = ("hbench-demo", "hbench-demo-quick")
PER_ACCOUNT_BOARD = 5
"""Runs issued per account and board: the boards' waiting limit."""
WEIGHTS = {
    "issue": 3, "upload": 2, "publish": 1, "list jobs": 3, "v1 runs": 3, "site page": 3,
}  # fmt: skip
"""How often each operation is picked; an operation whose supply ran out (runs to issue,
jobs to publish) gives way to a list of the client's jobs."""
DRAIN_SECONDS = 180.0
WRITER_POLL = "HBENCH_WRITER_POLL_INTERVAL"
READS = ("list jobs", "v1 runs")
READ_P99_GOAL_MS = 500.0
THROUGHPUT_GOAL = 141.0
"""Requests per second of the whole load: 3x the 47 measured before issue 20's work."""
REPLICA_GOAL = 1.6
"""Two replicas' requests per second, at least this many times one replica's."""
SETTLED_CPU = 0.04
"""CPU seconds per 0.4 s under which the deployment counts as done with the load's work:
the replicas following the data repository and the writer polling use some at rest."""
REPLICA_COST_GOAL = 0.9
"""Requests per CPU second of the deployment with N replicas, at least this share of one
replica's (issue 34): a replica adds no work per request."""
TAIL_GOAL = 10.0
"""The reads' p99 under the load, at most this many times their p50 from one client alone
(issue 34)."""
PARTS = {
    "multiprocessing.forkserver": "upload workers", "hbench-app serve": "service",
    "data-repo write": "writer", "moto.server": "S3 (moto)",
}  # fmt: skip
"""The parts of a deployment, by a mark of their command lines: the upload workers (forked
from the fork server, whose command line they keep) before the service that started them."""
DATABASE_PART = "PostgreSQL"
OTHER_PART = "other (git, …)"
POSTGRES_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
UPLOAD_WORKERS = 2
"""A service's upload workers (`HBENCH_UPLOAD_WORKERS`' default)."""


@dataclass
class Workload:
    """What the clients send: tokens to sign in with, the runs they may be issued, the
    archive to upload and the distinct archives to publish, and the pages to read."""

    tokens: list[str]
    upload_body: bytes
    publish_bodies: deque[bytes]
    site_pages: list[str]
    tickets: deque[tuple[str, str]] = field(default_factory=deque)

    def __post_init__(self) -> None:
        if not self.tickets:
            tickets = [(t, b) for b in BOARDS for t in self.tokens] * PER_ACCOUNT_BOARD
            self.tickets = deque(tickets)


@dataclass
class Ledger:
    """What the service accepted, by token, and how long each operation took."""

    uploaded: dict[str, list[str]] = field(default_factory=dict)
    published: dict[str, list[str]] = field(default_factory=dict)
    issued: dict[str, list[str]] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    alone: dict[str, list[float]] = field(default_factory=dict)
    """The latencies of the same operations from one client alone, before the load."""
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu_by_part: dict[str, float] = field(default_factory=dict)
    """CPU seconds the deployment used for the load, the work it left included, by the part
    of the deployment that used it (`deployment_cpu`, `PARTS`)."""
    pinned: str | None = None
    """Where the load generator and the deployment ran, when they ran apart."""

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu_by_part.values())

    @property
    def per_core_second(self) -> float:
        """Requests answered per CPU second of the deployment."""
        return self.requests / self.cpu_seconds if self.cpu_seconds else 0.0

    def note(self, kept: dict[str, list[str]], token: str, value: str) -> None:
        kept.setdefault(token, []).append(value)


class Client:
    """One simulated user: an HTTP connection pool shared by all, and its own choices."""

    def __init__(self, http: httpx.AsyncClient, work: Workload, ledger: Ledger, seed: int):
        self.http, self.work, self.ledger = http, work, ledger
        self.random = random.Random(seed)  # noqa: S311 - a workload's mix, not a secret
        # Clients start on the operations in turn, so even a short run does each of them.
        self.first = list(WEIGHTS)[seed % len(WEIGHTS)]

    async def call(
        self,
        op: str,
        method: str,
        path: str,
        token: str | None,
        *,
        json: object = None,
        gzip: bytes | None = None,
    ) -> httpx.Response | None:
        """Send one request; None (and an error noted) unless it is answered with success."""
        headers = {"authorization": f"Bearer {token}"} if token else {}
        if gzip is not None:
            headers["content-type"] = "application/gzip"
        start = time.perf_counter()
        try:
            answer = await self.http.request(method, path, headers=headers, json=json, content=gzip)
        except httpx.HTTPError as error:
            self.ledger.errors.append(f"{op}: {method} {path}: {type(error).__name__} {error}")
            return None
        self.ledger.latencies.setdefault(op, []).append(time.perf_counter() - start)
        if not answer.is_success:
            self.ledger.errors.append(
                f"{op}: {method} {path}: {answer.status_code} {answer.text[:300]}"
            )
            return None
        return answer

    async def loop(self, deadline: float) -> None:
        ops, weights = list(WEIGHTS), list(WEIGHTS.values())
        op = self.first
        while time.monotonic() < deadline:
            await self.step(op)
            op = self.random.choices(ops, weights)[0]

    async def step(self, op: str) -> None:
        token = self.random.choice(self.work.tokens)
        if op == "issue" and self.work.tickets:
            await self.issue(*self.work.tickets.popleft())
        elif op == "publish" and self.work.publish_bodies:
            await self.publish(token, self.work.publish_bodies.popleft())
        elif op == "upload":
            await self.upload(token, self.work.upload_body)
        elif op == "v1 runs":
            await self.call(op, "GET", "/v1/runs", None)
        elif op == "site page" and self.work.site_pages:
            await self.call(op, "GET", self.random.choice(self.work.site_pages), None)
        else:
            await self.call("list jobs", "GET", "/api/bench/jobs", token)

    async def issue(self, token: str, board: str) -> None:
        body = {"arena": board, "declarative": {"agent": "oracle"}}
        answer = await self.call("issue", "POST", "/api/local-runs", token, json=body)
        if answer is not None:
            self.ledger.note(self.ledger.issued, token, answer.json()["run_id"])

    async def upload(self, token: str, body: bytes) -> str | None:
        answer = await self.call("upload", "POST", "/api/bench/uploads", token, gzip=body)
        if answer is None:
            return None
        job_id: str = answer.json()["id"]
        self.ledger.note(self.ledger.uploaded, token, job_id)
        return job_id

    async def publish(self, token: str, body: bytes) -> None:
        job_id = await self.upload(token, body)
        if job_id is None:
            return
        path = f"/api/bench/jobs/{job_id}/publish"
        if await self.call("publish", "POST", path, token) is not None:
            self.ledger.note(self.ledger.published, token, job_id)


async def run_load(
    url: str | Sequence[str],
    work: Workload,
    ledger: Ledger,
    *,
    clients: int,
    seconds: float,
    seed: int = 7,
) -> Ledger:
    """`clients` clients looping over the workload for `seconds`, noting in `ledger` what
    they were answered and how fast; given several addresses (replicas), client n sends
    to the n-th of them in turn."""
    urls = [url] if isinstance(url, str) else list(url)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    https = [httpx.AsyncClient(base_url=u, limits=limits, timeout=120) for u in urls]
    try:
        started = time.perf_counter()
        deadline = time.monotonic() + seconds
        await asyncio.gather(
            *(
                Client(https[n % len(https)], work, ledger, seed * 1000 + n).loop(deadline)
                for n in range(clients)
            )
        )
        ledger.seconds = time.perf_counter() - started
    finally:
        for http in https:
            await http.aclose()
    return ledger


def published_run_files(service: Service) -> Counter[str]:
    """How many times each run id has a file in the data repository's default branch."""
    listing = subprocess.run(
        ["git", "--git-dir", str(service.state / "data.git"), "ls-tree", "-r", "--name-only",
         "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return Counter(
        path.rsplit("/", 1)[1].removesuffix(".json")
        for path in listing.splitlines()
        if path.startswith("boards/") and "/runs/" in path and path.endswith(".json")
    )


def wait_for_writer(service: Service, timeout: float = DRAIN_SECONDS) -> None:
    """Wait until the data-repo writer has applied every change the outbox holds."""
    from app.datarepo.outbox import counts  # noqa: PLC0415 - the service's own view
    from app.db.session import Database  # noqa: PLC0415

    database = Database(service.database_url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with database.session() as session:
                left = counts(session, max_attempts=5)
            if left.pending == 0:
                if left.given_up:
                    raise RuntimeError(f"the writer gave up on {left.given_up} changes")
                return
            time.sleep(0.5)
    finally:
        database.dispose()
    raise RuntimeError(f"the writer did not apply every change within {timeout:.0f} s")


def check_afterwards(url: str, service: Service, ledger: Ledger) -> list[str]:
    """Everything accepted is there exactly once: jobs on their owner's bench, issued
    runs in their owner's runs, published runs in the data repository."""
    problems: list[str] = []
    with httpx.Client(base_url=url, timeout=120) as http:
        for token in set(ledger.uploaded) | set(ledger.issued):
            auth = {"authorization": f"Bearer {token}"}
            jobs = http.get("/api/bench/jobs", params={"limit": 1000}, headers=auth).json()["jobs"]
            problems += once("job", [j["id"] for j in jobs], ledger.uploaded.get(token, []))
            published = {j["id"] for j in jobs if j["status"] == "published"}
            problems += once("published job", list(published), ledger.published.get(token, []))
            runs = http.get("/api/local-runs", params={"limit": 1000}, headers=auth).json()["runs"]
            problems += once(
                "issued run", [r["run_id"] for r in runs], ledger.issued.get(token, [])
            )
    wait_for_writer(service)
    files = published_run_files(service)
    for job_id in (j for jobs in ledger.published.values() for j in jobs):
        if files[job_id] != 1:
            problems.append(f"published job {job_id} has {files[job_id]} run files")
    return problems


def once(kind: str, found: Sequence[str], accepted: Sequence[str]) -> list[str]:
    counted = Counter(found)
    problems = [f"{kind} {k} is listed {n} times" for k, n in counted.items() if n > 1]
    problems += [f"{kind} {k} was accepted but is missing" for k in accepted if k not in counted]
    problems += [f"{kind} {k} was accepted twice" for k, n in Counter(accepted).items() if n > 1]
    extra = set(counted) - set(accepted)
    problems += [f"{kind} {k} is listed but was never accepted" for k in sorted(extra)]
    return problems


@dataclass(frozen=True)
class Figures:
    """Per operation: how many answered, per second, and the p50 and p99 latency in ms."""

    op: str
    count: int
    per_second: float
    p50_ms: float
    p99_ms: float


def figures(ledger: Ledger) -> list[Figures]:
    out = []
    for op in WEIGHTS:
        ms = [t * 1000 for t in ledger.latencies.get(op, [])]
        if ms:
            rate = len(ms) / ledger.seconds
            out.append(Figures(op, len(ms), rate, percentile(ms, 0.5), percentile(ms, 0.99)))
    return out


def prepare(
    folder: Path,
    service: Service,
    *,
    accounts: int,
    publishes: int,
    job: Path,
    also: Sequence[Service] = (),
) -> tuple[Workload, Ledger]:
    """Accounts and tokens, the archives, and a first publish (by an account of its own,
    noted in the ledger returned) so the site has board pages to read; then, to the
    service and to each of `also` (replicas), as many uploads at once as it has upload
    workers, so no worker starts while the load is timed."""
    logins = ["load-first", *(f"load-{n}" for n in range(accounts))]
    first, *tokens = make_tokens(service.database_url, logins).values()
    bodies = deque(packed(variant(job, folder / "variants", n)) for n in range(publishes + 1))
    work = Workload(tokens, packed(job), bodies, [])
    ledger = Ledger()

    async def publish_first() -> None:
        async with httpx.AsyncClient(base_url=service.url, timeout=120) as http:
            await Client(http, work, ledger, 0).publish(first, bodies.popleft())

    async def warm_up(url: str) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            client = Client(http, work, ledger, 0)
            await asyncio.gather(
                *(client.upload(first, work.upload_body) for _ in range(UPLOAD_WORKERS))
            )

    asyncio.run(publish_first())
    for url in (service.url, *(s.url for s in also)):
        asyncio.run(warm_up(url))
    if ledger.errors:
        raise RuntimeError(f"the first publish or a warm-up upload failed: {ledger.errors[0]}")
    ledger.latencies.clear()
    wait_for_writer(service)
    site = service.state / "site"
    pages = site_pages(site)
    work.site_pages = [
        "/site/" + p.relative_to(site).as_posix().removesuffix("index.html") for p in pages[:20]
    ]
    return work, ledger


def site_pages(site: Path, timeout: float = 60.0) -> list[Path]:
    """The built site's pages, once the rebuild after the first publish shows its board."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pages = sorted(site.rglob("*.html"))
        if any("hbench-demo" in page.as_posix() for page in pages):
            return pages
        time.sleep(0.2)
    raise RuntimeError(f"the site in {site} has no page of the demo board")


def report(
    ledger: Ledger, problems: list[str], clients: int, backend: str, benchmark: str = "load"
) -> int:
    rows = figures(ledger)
    total = sum(f.count for f in rows)
    rate = total / ledger.seconds
    print(f"\n{clients} clients for {ledger.seconds:.1f} s on loopback, {backend}: "
          f"{total} requests, {rate:.1f}/s, {len(ledger.errors)} errors\n")  # fmt: skip
    print(f"{'':<12}{'count':>8}{'per s':>9}{'p50 ms':>9}{'p99 ms':>9}")
    for f in rows:
        print(f"{f.op:<12}{f.count:>8}{f.per_second:>9.1f}{f.p50_ms:>9.0f}{f.p99_ms:>9.0f}")
    reads = {f.op: f.p99_ms for f in rows if f.op in READS}
    quick = all(p99 < READ_P99_GOAL_MS for p99 in reads.values())
    shown = ", ".join(f"{op} {ms:.0f} ms" for op, ms in reads.items())
    busy = verdict(rate >= THROUGHPUT_GOAL)
    print(f"\nreads' p99 {shown} (goal: under {READ_P99_GOAL_MS:.0f} ms) -> {verdict(quick)}; "
          f"{rate:.1f} requests/s (goal: at least {THROUGHPUT_GOAL:.0f}) -> {busy}")  # fmt: skip
    cpu_rows = cost_report(ledger, benchmark)
    tail_rows, tail_met = tail_report(ledger, rows, clients, benchmark)
    emit(
        [Row(benchmark, f"{clients} clients: all requests", rate, "req/s",
             goal=f"≥{THROUGHPUT_GOAL:.0f} req/s")]
        + [Row(benchmark, f"{f.op}: throughput", f.per_second, "req/s") for f in rows]
        + [
            Row(benchmark, f"{f.op}: latency p99", f.p99_ms, "ms", f"{f.op}: p50", f.p50_ms,
                f"<{READ_P99_GOAL_MS:.0f} ms" if f.op in READS else None)
            for f in rows
        ]
        + tail_rows + cpu_rows
    )  # fmt: skip
    for error in ledger.errors[:5]:
        print(f"error: {error}")
    for problem in problems[:5]:
        print(f"afterwards: {problem}")
    if ledger.errors or problems:
        return 1
    return 0 if quick and tail_met and rate >= THROUGHPUT_GOAL else 1


def cost_report(ledger: Ledger, benchmark: str) -> list[Row]:
    """The deployment's CPU for the load: per request, and requests per busy core-second."""
    if not ledger.cpu_seconds:
        return []
    per_request = ledger.cpu_seconds * 1000 / ledger.requests
    where = f"; {ledger.pinned}" if ledger.pinned else ""
    print(f"the deployment used {ledger.cpu_seconds:.1f} CPU seconds for the load and the "
          f"work it left: {per_request:.1f} ms per request, {ledger.per_core_second:.1f} "
          f"requests per busy core-second{where}")  # fmt: skip
    shares = ", ".join(
        f"{part} {cpu * 1000 / ledger.requests:.1f}" for part, cpu in ledger.cpu_by_part.items()
    )
    print(f"CPU ms per request, by part: {shares}")
    return [Row(benchmark, "requests per busy core-second", ledger.per_core_second, "req/s")]


def tail_report(
    ledger: Ledger, rows: list[Figures], clients: int, benchmark: str
) -> tuple[list[Row], bool]:
    """The reads' p99 under the load beside their own p50 from one client alone."""
    if not ledger.alone:
        return [], True
    out, met = [], True
    for f in rows:
        alone = [t * 1000 for t in ledger.alone.get(f.op, [])]
        if f.op not in READS or not alone:
            continue
        floor = percentile(alone, 0.5)
        ratio = f.p99_ms / floor
        met = met and ratio <= TAIL_GOAL
        print(f"{f.op}: p99 {f.p99_ms:.0f} ms under {clients} clients, {ratio:.1f}x its p50 "
              f"of {floor:.1f} ms from one client alone ({len(alone)} requests; goal: at most "
              f"{TAIL_GOAL:.0f}x) -> {verdict(ratio <= TAIL_GOAL)}")  # fmt: skip
        name = f"{f.op}: p50, one client alone"
        goal = f"at most {TAIL_GOAL:.0f}x"
        out.append(Row(benchmark, f"{f.op}: p99 under {clients} clients", f.p99_ms, "ms", name,
                       floor, goal))  # fmt: skip
    return out, met


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def print_failures(log: Path, most: int = 3) -> None:
    """The last lines of the service log's first tracebacks, before the log is deleted."""
    lines = log.read_text(errors="replace").splitlines()
    starts = [n for n, line in enumerate(lines) if line.startswith("Traceback")]
    for start in starts[:most]:
        end = next((n for n in range(start + 1, len(lines)) if not lines[n][:1].isspace()), start)
        print("service log:", *lines[max(start, end - 6) : end + 1], sep="\n  ")


@contextmanager
def scratch_postgres(server: str) -> Iterator[str]:
    """A new, empty PostgreSQL database on `server`; yields its URL, drops it afterwards."""
    from sqlalchemy import create_engine, text  # noqa: PLC0415 - only replicas use it

    name = f"hbench_load_{secrets.token_hex(6)}"
    admin = create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield f"{server}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def bucket_settings(endpoint: str, prefix: str) -> dict[str, str]:
    """A new bucket, named `prefix-…`, on the S3 server at `endpoint`, and the service's
    settings for it."""
    import boto3  # noqa: PLC0415 - only the benchmarks that use S3 need it

    bucket = f"{prefix}-{secrets.token_hex(6)}"
    boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=TEST_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=TEST_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        region_name=TEST_CREDENTIALS["AWS_DEFAULT_REGION"],
    ).create_bucket(Bucket=bucket)  # fmt: skip
    return {
        **TEST_CREDENTIALS, "HBENCH_BLOB_STORE": "s3", "HBENCH_S3_ENDPOINT": endpoint,
        "HBENCH_S3_BUCKET": bucket,
    }  # fmt: skip


@contextmanager
def running_deployment(
    folder: Path,
    *,
    replicas: int,
    workers: int,
    postgres_server: str,
    s3_endpoint: str,
    upload_workers: int = UPLOAD_WORKERS,
) -> Iterator[list[Service]]:
    """A new database and bucket, the writer alone, and `replicas` replicas following the
    data repository it pushes to (each replica's `data.git` is the writer's), each with
    its own state folder and `upload_workers` upload workers, until the block ends."""
    stores = {**bucket_settings(s3_endpoint, "hbench-load"), WRITER_POLL: "1"}
    with scratch_postgres(postgres_server) as url, ExitStack() as stack:
        writer_state = folder / "writer"
        log = (folder / "writer.log").open("wb")
        stack.callback(log.close)
        writer = subprocess.Popen(
            [str(BIN / "hbench-app"), "data-repo", "write", "--state-dir", str(writer_state)],
            env=service_env(url, stores), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        stack.callback(writer.wait, 30)
        stack.callback(writer.terminate)
        remote = writer_state / "data.git"
        deadline = time.monotonic() + 90
        while not (remote / "HEAD").exists():
            if writer.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the writer did not start:\n{(folder / 'writer.log').read_text()}"
                )
            time.sleep(0.2)
        # The writer polls every second, so publishes land while the load runs; the
        # replicas follow the data repository at the service's own interval, as deployed:
        # each replica rebuilds its site whenever it finds the repository moved.
        replica_env = {
            **{k: v for k, v in stores.items() if k != WRITER_POLL},
            "HBENCH_WRITER_ENABLED": "false", "HBENCH_SITE_FOLLOW": "true",
            "HBENCH_WORKERS": str(workers), "HBENCH_UPLOAD_WORKERS": str(upload_workers),
        }  # fmt: skip
        services = []
        for n in range(replicas):
            state = folder / f"replica-{n + 1}"
            state.mkdir(mode=0o700)
            (state / "data.git").symlink_to(remote.resolve(), target_is_directory=True)
            services.append(
                stack.enter_context(running_service(state, database_url=url, env=replica_env))
            )
        yield services


def load_once(
    folder: Path, services: list[Service], job: Path, args: argparse.Namespace
) -> tuple[Ledger, list[str]]:
    """Prepare the accounts and jobs; one client alone for a while, then the load against
    the services, the deployment's CPU read around it; check afterwards."""
    first = services[0]
    print(f"making {args.accounts} accounts and {args.publishes} jobs …", flush=True)
    work, ledger = prepare(
        folder, first, accounts=args.accounts, publishes=args.publishes, job=job,
        also=services[1:],
    )  # fmt: skip
    urls = [service.url for service in services]
    if args.alone_seconds:
        print(f"one client for {args.alone_seconds:.0f} s …", flush=True)
        asyncio.run(run_load(urls, work, ledger, clients=1, seconds=args.alone_seconds))
        ledger.alone, ledger.latencies = ledger.latencies, {}
    print(f"{args.clients} clients for {args.seconds:.0f} s against {len(services)} "
          f"replica{'s' if len(services) > 1 else ''} …", flush=True)  # fmt: skip
    with ExitStack() as stack:
        backends = database_backends(first.database_url)
        if backends is not None:
            stack.callback(backends.close)
        ledger.pinned = stack.enter_context(pinned_apart())

        def used() -> float:
            return sum(deployment_cpu(backends).values())

        before = deployment_cpu(backends)
        asyncio.run(run_load(urls, work, ledger, clients=args.clients, seconds=args.seconds))
        settle(used, quiet=SETTLED_CPU)
        after = deployment_cpu(backends)
        ledger.cpu_by_part = {part: after[part] - before.get(part, 0.0) for part in after}
    problems = check_afterwards(first.url, first, ledger)
    if ledger.errors:
        for service in services:
            print_failures(service.log)
    return ledger, problems


def database_backends(database_url: str) -> Backends | None:
    """The watch on the PostgreSQL backends of the service's database (None on SQLite)."""
    if not database_url.startswith("postgresql"):
        return None
    server, name = database_url.rsplit("/", 1)
    return Backends(server, name)


def deployment_cpu(backends: Backends | None) -> dict[str, float]:
    """CPU seconds used so far by every process this one started and by the database's
    PostgreSQL backends, by part (`PARTS`); not by this process, the load generator."""
    me = os.getpid()
    used = dict.fromkeys([*PARTS.values(), OTHER_PART], 0.0)
    for pid in tree(me):
        if pid != me:
            used[part_of(pid)] += pids_cpu([pid])
    used[DATABASE_PART] = backends.cpu() if backends is not None else 0.0
    return used


def part_of(pid: int) -> str:
    """Which part of the deployment a process is, by its command line (`PARTS`)."""
    try:
        command = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return OTHER_PART
    return next((part for marker, part in PARTS.items() if marker in command), OTHER_PART)


@contextmanager
def pinned_apart() -> Iterator[str | None]:
    """Where the machine has two cores or more, the load generator (this process) on the
    first and everything it started, every thread of it, on the others, until the block
    ends; yields where each ran, or None on one core. PostgreSQL, not ours to start,
    stays where the system runs it."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        yield None
        return
    me = os.getpid()
    others = set(cores[1:])
    for pid in tree(me):
        if pid != me:
            for task in (PROC / str(pid) / "task").glob("*"):
                with suppress(OSError):  # a thread that ended since it was listed
                    os.sched_setaffinity(int(task.name), others)
    os.sched_setaffinity(0, {cores[0]})
    try:
        yield f"the load generator on core {cores[0]}, the deployment on {len(others)} other"
    finally:
        # What this process starts next (a new deployment) may run anywhere again.
        os.sched_setaffinity(0, set(cores))


def replicas_main(folder: Path, job: Path, args: argparse.Namespace) -> int:
    """One replica, then `args.replicas`, each a fresh deployment under the same load."""
    outcomes = []
    with moto_s3() as s3_endpoint:
        for count in (1, args.replicas):
            where = folder / f"deployment-{count}"
            where.mkdir()
            # The replicas share as many upload workers as one replica has: on the same
            # cores, N replicas of UPLOAD_WORKERS each would put N times the processes on
            # them, and each upload then costs more CPU (measured on one core: 59 ms of the
            # workers' CPU per upload with 2 workers, 147 ms with 4, 76 ms with 2 replicas
            # of 1), which is the processes' count, not the replicas'.
            with running_deployment(
                where, replicas=count, workers=args.workers,
                upload_workers=max(1, UPLOAD_WORKERS // count),
                postgres_server=args.postgres_server, s3_endpoint=s3_endpoint,
            ) as services:  # fmt: skip
                outcomes.append((count, *load_once(where, services, job, args)))
    for count, ledger, problems in outcomes:
        backend = f"PostgreSQL, S3, the writer alone, {count} replica{'s' if count > 1 else ''}"
        backend += f" of {args.workers} worker{'s' if args.workers > 1 else ''}"
        name = f"load, {count} replica{'s' if count > 1 else ''}"
        report(ledger, problems, args.clients, backend, name)
    (_, one, _), (_, many, _) = outcomes
    rates = [ledger.requests / ledger.seconds for ledger in (one, many)]
    share = rates[1] / rates[0]
    met = share >= REPLICA_GOAL
    print(f"\n{args.replicas} replicas answer {share:.2f}x the requests per second of one "
          f"(goal: at least {REPLICA_GOAL}x) -> {verdict(met)}")  # fmt: skip
    costs = [one.per_core_second, many.per_core_second]
    cheap = costs[1] >= REPLICA_COST_GOAL * costs[0]
    print(
        f"{args.replicas} replicas answer {costs[1] / costs[0]:.2f}x the requests per busy "
        f"core-second of one (goal: at least {REPLICA_COST_GOAL}x) -> {verdict(cheap)}"
    )
    emit([
        Row("load replicas", f"{args.replicas} replicas: all requests", rates[1], "req/s",
            "one replica", rates[0], f"≥{REPLICA_GOAL}x"),
        Row("load replicas", f"{args.replicas} replicas: requests per busy core-second",
            costs[1], "req/s", "one replica", costs[0], f"≥{REPLICA_COST_GOAL}x"),
    ])  # fmt: skip
    # Errors, losses and the reads' latency hold for every deployment; the throughput goal
    # of one service is not asked of the replicas' comparison.
    failed = any(ledger.errors or problems for _, ledger, problems in outcomes)
    return 1 if failed or not (met and cheap) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--accounts", type=int, default=200, help="each is issued 10 runs")
    parser.add_argument("--publishes", type=int, default=200, help="distinct jobs to publish")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument(
        "--alone-seconds", type=float, default=10.0,
        help="one client alone first, for the reads' p50 the load's p99 is held to (0: none)",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, help="the service's processes")
    parser.add_argument(
        "--replicas", type=int, default=1,
        help="above 1: compare this many replicas (PostgreSQL, S3, the writer alone) with one",
    )  # fmt: skip
    parser.add_argument("--postgres-server", default=POSTGRES_SERVER, help="for --replicas")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-load-") as scratch:
        folder = Path(scratch)
        print("running the demo job with hbench run …", flush=True)
        job = run_demo_job(folder)
        if args.replicas > 1:
            return replicas_main(folder, job, args)
        env = {WRITER_POLL: "1", "HBENCH_WORKERS": str(args.workers)}
        with running_service(folder / "state", database_url=args.database_url, env=env) as service:
            ledger, problems = load_once(folder, [service], job, args)
    backend = "PostgreSQL" if args.database_url else "SQLite"
    backend += f", {args.workers} worker{'s' if args.workers > 1 else ''}"
    return report(ledger, problems, args.clients, backend)


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the served service's CPU per request, each beside its floor, in one run.

The service runs as `hbench-app serve` (one process, with the no-op route of
`bench/service.py`, `GET /bench/noop`, which touches nothing), on a fresh PostgreSQL
database (or SQLite with `--sqlite`) and an S3 bucket on moto's server; the clients run
in this process. For each kind of request, the service's CPU time (its process and
everything under it: upload workers, their fork server, the writer's git commands, from
/proc, `bench/proc_cpu.py`) is read before and after N requests, once the work they left
behind has settled, less the idle service's CPU over the same wall time, over N:

- issuing a run (`POST /api/local-runs`, what `hbench runs issue` calls);
- reads: `GET /api/bench/jobs` (an owner of some jobs), `GET /v1/runs` (20 pushed runs),
  a page of the built site;
- publishing a job (the request, the writer's commit and the site's rebuild after it);
- uploads of two real sealed jobs: the demo job (`hbench run` of the demo dataset) and
  the same with Harbor-like text logs added to its trials (`bench/upload_check.py`'s
  text), sealed again.

The floors, measured the same way in the same rounds: the no-op route for every request;
for the uploads, the CPU of `tar xzf` then `sha256sum` of every file of the same archive.
Also per request: the PostgreSQL backends' CPU (/proc of the database's backends) and
the S3 requests (moto's request log). Rounds alternate; each figure is the median of
the rounds'. Last, the data repository's writer alone (`bench/publish_outbox.py`'s
measure): seconds per commit of one publish and of a batch of 100.

    .venv/bin/python bench/request_cost.py                # writes bench/results/request_cost.json
    .venv/bin/python bench/request_cost.py --rounds 3 --sqlite --output /tmp/cost.json

The goals (issue "Scale measured per core"): issuing at most 2x the no-op's CPU per
request, each read at most 1.5x, an upload's server CPU per MiB at most 1.25x tar+sha256
of the same archive. Exits 1 when a request fails or a goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import httpx
from issue_throughput import Request, hammer, issue_requests
from load import POSTGRES_SERVER, bucket_settings, prepare, scratch_postgres
from proc_cpu import Backends, settle, tree_cpu
from publish_outbox import measure as measure_writer
from publish_outbox import publishes as synthetic_publishes
from report import Row, emit, median
from service import NOOP_PATH, Service, make_tokens, packed, run_demo_job, running_service
from service import variant as variant_of
from upload_check import MIB, text_pool, time_tar_sha256sum
from upload_concurrent import upload_all

from hbench.jobs.manifest import load_manifest
from hbench.jobs.sealing import seal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/ is not installed
from tools.moto_s3 import wait_until_listening

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "results" / "request_cost.json"
FORMAT_VERSION = 1
CLIENTS = 10
COUNTS = {
    "no-op": 300, "issue": 100, "list jobs": 200, "v1 runs": 200, "site page": 200,
    "publish": 3, "upload small": 8, "upload large": 3,
}  # fmt: skip
"""Requests per round: enough that each round's CPU is many clock ticks (10 ms)."""
LARGE_TEXT_MIB = 24
"""Text logs added to the large job, over its trials: it packs about 8x."""
READS = ("list jobs", "v1 runs", "site page")
ISSUE_GOAL, READ_GOAL, UPLOAD_GOAL = 2.0, 1.5, 1.25
V1_RUNS = 20
"""Runs pushed to `POST /v1/runs` before the rounds: one full page of `GET /v1/runs`."""
READER_JOBS = 10
"""Jobs of the account whose list `GET /api/bench/jobs` reads: a bench of some jobs."""
WRITER_PUBLISHES = {1: 40, 100: 300}
"""The writer alone: publishes drained at each batch size."""
S3_REQUEST = re.compile(r'"(GET|PUT|POST|HEAD|DELETE) /')


# --- What the service used -----------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """What the service had used at one moment: CPU seconds, its database's, S3 requests."""

    at: float
    service: float
    database: float
    s3: int


@dataclass
class Deployment:
    """The service under test, its bucket's request log and its database's backends."""

    service: Service
    s3_log: Path
    backends: Backends | None
    idle_rate: tuple[float, float] = (0.0, 0.0)
    """CPU seconds per second of the idle service and of its database."""

    def read(self) -> Reading:
        text = self.s3_log.read_text(errors="replace")
        database = self.backends.cpu() if self.backends else 0.0
        s3 = len(S3_REQUEST.findall(text))
        return Reading(time.monotonic(), tree_cpu(self.service.process.pid), database, s3)

    def settle(self) -> None:
        def used() -> float:
            reading = self.read()
            return reading.service + reading.database

        settle(used)


@dataclass(frozen=True)
class Sample:
    """One round of one kind of request: per request, the service's and the database's
    CPU milliseconds (idle subtracted) and the S3 requests."""

    op: str
    requests: int
    cpu_ms: float
    db_ms: float
    s3: float


def costed(deployment: Deployment, op: str, requests: int, work: Callable[[], object]) -> Sample:
    """Run `work` (sending `requests` requests), wait for what it left behind, and divide."""
    deployment.settle()
    before = deployment.read()
    work()
    deployment.settle()
    after = deployment.read()
    wall = after.at - before.at
    idle_cpu, idle_db = deployment.idle_rate
    cpu = after.service - before.service - idle_cpu * wall
    db = after.database - before.database - idle_db * wall
    return Sample(op, requests, 1000 * cpu / requests, 1000 * db / requests,
                  (after.s3 - before.s3) / requests)  # fmt: skip


def idle_rate(deployment: Deployment, seconds: float = 3.0) -> tuple[float, float]:
    """CPU seconds per second the idle service, and its database, use."""
    deployment.settle()
    before = deployment.read()
    time.sleep(seconds)
    after = deployment.read()
    wall = after.at - before.at
    return (after.service - before.service) / wall, (after.database - before.database) / wall


# --- The deployment ------------------------------------------------------------------------


@contextmanager
def logged_s3(folder: Path) -> Iterator[tuple[str, Path]]:
    """moto's S3 server (as `tools/moto_s3.py` starts it) with its request log kept here."""
    log_path = folder / "moto.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield wait_until_listening(process, log_path), log_path
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def deployment(folder: Path, *, sqlite: bool, postgres_server: str) -> Iterator[Deployment]:
    """The service with the no-op route, one process, on a new database and bucket."""
    with ExitStack() as stack:
        endpoint, s3_log = stack.enter_context(logged_s3(folder))
        url = None if sqlite else stack.enter_context(scratch_postgres(postgres_server))
        env = {**bucket_settings(endpoint, "hbench-cost"), "HBENCH_WORKERS": "1"}
        service = stack.enter_context(
            running_service(folder / "state", database_url=url, noop=True, env=env)
        )
        backends = None
        if url is not None:
            backends = Backends(postgres_server, url.rsplit("/", 1)[1])
            stack.callback(backends.close)
        yield Deployment(service, s3_log, backends)


# --- What the clients send -----------------------------------------------------------------


@dataclass(frozen=True)
class Archive:
    """A packed job as a client sends it, its file on disk, and its size."""

    body: bytes
    path: Path
    files: int
    unpacked: int

    @property
    def mib(self) -> float:
        return len(self.body) / MIB

    def sizes(self) -> dict[str, float]:
        return {"mib": self.mib, "unpacked_mib": self.unpacked / MIB, "files": self.files}


@dataclass
class Fixture:
    """Accounts (issuing ones, the owner who uploads and publishes, a reader of their own
    jobs), archives, pages and jobs to publish, made before the rounds."""

    issuers: list[str]
    owner: str
    reader: str
    small: Archive
    large: Archive
    pages: list[str]
    to_publish: list[str] = field(default_factory=list)


def archive(job: Path, folder: Path) -> Archive:
    body = packed(job)
    path = folder / f"{job.parent.name}-{job.name}.tar.gz"
    path.write_bytes(body)
    files = [p for p in job.rglob("*") if p.is_file()]
    return Archive(body, path, len(files), sum(p.stat().st_size for p in files))


def with_logs(job: Path, folder: Path, mib: float, seed: int = 7) -> Path:
    """A variant of the job with `mib` MiB of log text over its trials' agent folders,
    sealed again with the same spec digest."""
    dest = variant_of(job, folder, 99_999)
    trials = sorted(p for p in dest.iterdir() if (p / "result.json").is_file())
    text = text_pool(random.Random(seed), int(mib * MIB))  # noqa: S311 - test data
    each = len(text) // len(trials)
    for n, trial in enumerate(trials):
        (trial / "agent").mkdir(exist_ok=True)
        (trial / "agent" / "session.log").write_bytes(text[n * each : (n + 1) * each])
    seal(dest, spec_digest=load_manifest(job).spec_digest)
    return dest


def make_fixture(folder: Path, service: Service, *, publishes: int, issues: int) -> Fixture:
    """The demo job run and packed, its large variant, accounts that may be issued
    `issues` runs, pushed runs, a first publish (so the site has pages), and `publishes`
    jobs to publish, uploaded."""
    job = run_demo_job(folder)
    work, _ = prepare(folder, service, accounts=1, publishes=publishes, job=job)
    owner = work.tokens[0]
    reader = make_tokens(service.database_url, ["reader"])["reader"]
    logins = [f"issuer-{n}" for n in range(-(-issues // 10))]
    issuers = list(make_tokens(service.database_url, logins).values())
    small = archive(job, folder)
    large = archive(with_logs(job, folder / "large", LARGE_TEXT_MIB), folder)
    fixture = Fixture(issuers, owner, reader, small, large, work.site_pages)
    uploaded(service.url, reader, small.body, READER_JOBS)
    with httpx.Client(base_url=service.url, timeout=120) as http:
        auth = {"authorization": f"Bearer {owner}"}
        for n in range(V1_RUNS):
            answer = http.post("/v1/runs", json=run_summary(n), headers=auth)
            answer.raise_for_status()
        for body in work.publish_bodies:
            headers = {**auth, "content-type": "application/gzip"}
            answer = http.post("/api/bench/uploads", content=body, headers=headers)
            answer.raise_for_status()
            fixture.to_publish.append(answer.json()["id"])
    return fixture


def run_summary(n: int) -> dict[str, object]:
    """A run summary for `POST /v1/runs` (the skill document's example, as the tests')."""
    return {
        "benchmarkSlug": "mmlu-pro", "model": "openai/gpt-5", "harness": "codex",
        "taskCount": 50, "nAttempts": 1, "score": 50 + n, "metric": "accuracy",
        "tokensUsed": None, "costUsd": None, "harborVersion": "0.23.1", "cliVersion": "0.2.0",
        "resultsHash": f"{n:064x}",
        "taskRewards": [{"task": "mmlu-pro-0001", "reward": 1}],
        "notes": "bench/request_cost.py",
    }  # fmt: skip


# --- One round ------------------------------------------------------------------------------


def sent(url: str, requests: list[Request]) -> None:
    """Send the requests, `CLIENTS` at a time; raise if any is not a success."""
    failures = asyncio.run(hammer(url, requests, CLIENTS)).failures
    if failures:
        raise RuntimeError(f"{len(failures)} requests failed, the first: {failures[0]}")


def uploaded(url: str, token: str, body: bytes, count: int) -> None:
    failures = asyncio.run(upload_all(url, token, body, count, 2)).failures
    if failures:
        raise RuntimeError(f"{len(failures)} uploads failed, the first: {failures[0]}")


def requests_for(op: str, fixture: Fixture, round_no: int) -> list[Request]:
    """The requests of one round of a read, issue or publish."""
    count = COUNTS[op]
    if op == "no-op":
        return [("GET", NOOP_PATH, None, None)] * count
    if op == "issue":
        per_round = -(-count // 10)
        return issue_requests(fixture.issuers[round_no * per_round :][:per_round], count)
    if op == "list jobs":
        return [("GET", "/api/bench/jobs", None, fixture.reader)] * count
    if op == "v1 runs":
        return [("GET", "/v1/runs", None, None)] * count
    if op == "site page":
        return [("GET", fixture.pages[n % len(fixture.pages)], None, None) for n in range(count)]
    jobs = fixture.to_publish[round_no * count : (round_no + 1) * count]
    return [("POST", f"/api/bench/jobs/{job}/publish", None, fixture.owner) for job in jobs]


def one_round(deployment: Deployment, fixture: Fixture, round_no: int) -> list[Sample]:
    """Every kind of request once, in the same order each round."""
    url = deployment.service.url
    samples = []
    for op in ("no-op", "issue", *READS, "publish"):
        requests = requests_for(op, fixture, round_no)
        samples.append(costed(deployment, op, len(requests), partial(sent, url, requests)))
    for op, kind in (("upload small", fixture.small), ("upload large", fixture.large)):
        count = COUNTS[op]
        work = partial(uploaded, url, fixture.owner, kind.body, count)
        samples.append(costed(deployment, op, count, work))
    return samples


def tar_floor(fixture: Fixture, folder: Path) -> dict[str, float]:
    """CPU milliseconds of `tar xzf` + `sha256sum` of each archive."""
    return {
        name: 1000 * time_tar_sha256sum(kind.path, folder / "untarred").cpu
        for name, kind in (("small", fixture.small), ("large", fixture.large))
    }


# --- Where the CPU goes ---------------------------------------------------------------------


def profiled(deployment: Deployment, fixture: Fixture, op: str, py_spy: str, rounds: int) -> str:
    """py-spy's samples of the service (and its workers) while it answers `rounds` rounds
    of `op`, of the threads holding the GIL (running Python), summed by function."""
    out = deployment.service.state.parent / f"profile-{op.replace(' ', '-')}.txt"
    pid = str(deployment.service.process.pid)
    command = [py_spy, "record", "--pid", pid, "--format", "raw", "--output", str(out),
               "--rate", "200", "--subprocesses", "--gil"]  # fmt: skip
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # py-spy attaches
    for n in range(rounds):
        if op.startswith("upload"):
            body = fixture.small.body if op == "upload small" else fixture.large.body
            uploaded(deployment.service.url, fixture.owner, body, COUNTS[op])
        else:
            sent(deployment.service.url, requests_for(op, fixture, n))
    time.sleep(5.0 if op == "publish" else 0.5)  # the writer's commit, the site's rebuild
    recorder.send_signal(signal.SIGINT)
    recorder.wait(timeout=60)
    return top_frames(out.read_text())


def top_frames(collapsed: str, count: int = 25) -> str:
    """The functions of our packages in the most samples, from py-spy's collapsed stacks,
    and the frames that were running (any package's) in the most."""
    inclusive: dict[str, int] = {}
    running: dict[str, int] = {}
    total = 0
    for line in collapsed.splitlines():
        stack, _, samples = line.rpartition(" ")
        frames, n = stack.split(";")[1:], int(samples)
        total += n
        for frame in set(frames):
            if re.search(r"\((app|hbench|registry|sitebuild)/", frame):
                inclusive[frame] = inclusive.get(frame, 0) + n
        if frames:
            running[frames[-1]] = running.get(frames[-1], 0) + n
    lines = [f"{total} samples; our functions by the share of samples they are in:"]
    for frame, n in sorted(inclusive.items(), key=lambda kv: -kv[1])[:count]:
        lines.append(f"{100 * n / total:5.1f}%  {frame}")
    lines.append("running when sampled:")
    for frame, n in sorted(running.items(), key=lambda kv: -kv[1])[:count]:
        lines.append(f"{100 * n / total:5.1f}%  {frame}")
    return "\n".join(lines)


# --- The figures ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OpCost:
    """Medians over rounds, per request: the service's CPU ms, its database's, S3 requests."""

    cpu_ms: float
    db_ms: float
    s3: float
    requests: int


@dataclass(frozen=True)
class WriterCost:
    """The data repository's writer alone: wall seconds per commit at each batch size."""

    batch_size: int
    publishes: int
    commits: int
    seconds_per_commit: float
    repository_kib: float
    """The bare data repository's size on disk afterwards (`git count-objects`' packs and
    loose objects)."""


@dataclass
class Costs:
    """What `bench/capacity.py` models from: this file's output, as JSON."""

    command: str
    cores: int
    database: str
    blob_store: str
    rounds: int
    clients: int
    idle_cpu_per_s: float
    idle_db_per_s: float
    ops: dict[str, OpCost]
    archives: dict[str, dict[str, float]]
    tar_sha256_ms: dict[str, float]
    writer: list[WriterCost]
    format_version: int = FORMAT_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"


def load_costs(path: Path) -> Costs:
    """A `Costs` file written by this script; refuses another format version."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path} is not a request-cost file of version {FORMAT_VERSION}")
    data["ops"] = {op: OpCost(**cost) for op, cost in data["ops"].items()}
    data["writer"] = [WriterCost(**w) for w in data["writer"]]
    return Costs(**data)


def op_costs(samples: list[Sample]) -> dict[str, OpCost]:
    ops = dict.fromkeys(s.op for s in samples)
    return {
        op: OpCost(
            median(s.cpu_ms for s in samples if s.op == op),
            median(s.db_ms for s in samples if s.op == op),
            median(s.s3 for s in samples if s.op == op),
            sum(s.requests for s in samples if s.op == op),
        )
        for op in ops
    }


def writer_costs(folder: Path) -> list[WriterCost]:
    """The writer's wall seconds per commit, one publish per commit and 100 per commit."""
    out = []
    for size, count in WRITER_PUBLISHES.items():
        root = folder / f"writer-{size}"
        root.mkdir()
        _, writing, commits = measure_writer(root, synthetic_publishes(count), size)
        out.append(WriterCost(size, count, commits, writing / commits, repository_kib(root)))
    return out


def repository_kib(root: Path) -> float:
    """The size of the bare repository `root/data.git`, packed and loose, in KiB."""
    git = ["git", "--git-dir", str(root / "data.git")]
    subprocess.run([*git, "gc", "--quiet"], check=True)
    text = subprocess.run([*git, "count-objects", "-v"], check=True, capture_output=True,
                          text=True).stdout  # fmt: skip
    fields = dict(line.split(": ") for line in text.splitlines())
    return float(fields["size"]) + float(fields["size-pack"])


def rows(costs: Costs) -> list[Row]:
    """Each figure beside its floor, for the table of `make bench`."""
    noop = costs.ops["no-op"].cpu_ms
    out = [Row("request cost", "no-op route", noop, "CPU ms/req")]
    for op in ("issue", *READS, "publish"):
        goal = f"≤{ISSUE_GOAL}x" if op == "issue" else f"≤{READ_GOAL}x" if op in READS else None
        out.append(Row("request cost", op, costs.ops[op].cpu_ms, "CPU ms/req", "no-op route",
                       noop, goal))  # fmt: skip
    for size in ("small", "large"):
        mib = costs.archives[size]["mib"]
        server = costs.ops[f"upload {size}"].cpu_ms
        tar = costs.tar_sha256_ms[size]
        goal = f"≤{UPLOAD_GOAL}x" if size == "large" else None
        out.append(Row("request cost", f"upload {size} ({mib:.2f} MiB): per MiB", server / mib,
                       "CPU ms/MiB", "tar xzf + sha256sum", tar / mib, goal))  # fmt: skip
    return out


def report(costs: Costs) -> int:
    table = rows(costs)
    print(f"\nservice CPU per request (medians of {costs.rounds} rounds, {costs.clients} clients, "
          f"{costs.database}, {costs.blob_store}, {costs.cores} cores):\n")  # fmt: skip
    print(f"{'':<34}{'value':>10}  {'floor':>10}  {'ratio':>7}  goal")
    for row in table:
        floor = f"{row.baseline_value:10.3f}" if row.baseline_value is not None else " " * 10
        ratio = f"{row.ratio:6.2f}x" if row.ratio is not None else " " * 7
        print(f"{row.figure:<34}{row.value:10.3f}  {floor}  {ratio}  {row.goal or ''}"
              f"  {row.unit}")  # fmt: skip
    print("\nper request, database CPU ms and S3 requests:")
    for op, cost in costs.ops.items():
        print(f"{op:<34}{cost.db_ms:10.3f}  {cost.s3:8.2f}")
    print(
        f"idle service: {1000 * costs.idle_cpu_per_s:.2f} CPU ms/s, its database "
        f"{1000 * costs.idle_db_per_s:.2f} CPU ms/s"
    )
    for w in costs.writer:
        print(f"writer alone, batches of {w.batch_size}: {1000 * w.seconds_per_commit:.1f} ms "
              f"per commit ({w.publishes} publishes, {w.commits} commits)")  # fmt: skip
    missed = [row for row in table if row.goal and row.ratio and row.ratio > float(row.goal[1:-1])]
    for row in table:
        if row.goal:
            met = row not in missed
            print(f"{row.figure}: {row.ratio:.2f}x its floor (goal: {row.goal}) -> "
                  f"{'met' if met else 'MISSED'}")  # fmt: skip
    emit(table)
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--postgres-server", default=POSTGRES_SERVER)
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where the JSON goes")
    parser.add_argument(
        "--profile", action="append", choices=list(COUNTS),
        help="instead of measuring: where the CPU goes for this kind (repeatable), by py-spy",
    )  # fmt: skip
    parser.add_argument("--py-spy", default="py-spy", help="py-spy's command, for --profile")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as scratch:
        folder = Path(scratch)
        with deployment(folder, sqlite=args.sqlite, postgres_server=args.postgres_server) as dep:
            print("running the demo job, accounts, the first publish …", flush=True)
            sets = args.rounds + 1  # and one warm round
            fixture = make_fixture(folder, dep.service, publishes=COUNTS["publish"] * sets,
                                   issues=COUNTS["issue"] * sets)  # fmt: skip
            one_round(dep, fixture, args.rounds)  # warm: every path's first call, unmeasured
            for op in args.profile or ():
                print(f"\n== {op}\n{profiled(dep, fixture, op, args.py_spy, args.rounds)}")
            if args.profile:
                return 0
            dep.idle_rate = idle_rate(dep)
            samples: list[Sample] = []
            floors: list[dict[str, float]] = []
            for n in range(args.rounds):
                print(f"round {n + 1} of {args.rounds} …", flush=True)
                samples += one_round(dep, fixture, n)
                floors.append(tar_floor(fixture, folder))
        shutil.rmtree(folder / "state", ignore_errors=True)
        costs = Costs(
            command=" ".join(["bench/request_cost.py", *(argv or sys.argv[1:])]),
            cores=os.cpu_count() or 0,
            database="SQLite" if args.sqlite else "PostgreSQL",
            blob_store="S3 (moto)", rounds=args.rounds, clients=CLIENTS,
            idle_cpu_per_s=dep.idle_rate[0], idle_db_per_s=dep.idle_rate[1],
            ops=op_costs(samples),
            archives={"small": fixture.small.sizes(), "large": fixture.large.sizes()},
            tar_sha256_ms={k: median(f[k] for f in floors) for k in ("small", "large")},
            writer=writer_costs(folder),
        )  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(costs.to_json(), encoding="utf-8")
    print(f"\n{time.monotonic() - started:.0f} s; figures written to {args.output}")
    return report(costs)


if __name__ == "__main__":
    sys.exit(main())

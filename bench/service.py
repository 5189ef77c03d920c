"""What the benchmarks against the running service share: a real demo job, its sealed
variants, the service in its own process on loopback, and accounts with API tokens.

Run as a script, it serves the app as `hbench-app serve` does (the same command, settings,
server configuration and workers) with one more route, `GET /bench/noop`, which does
nothing: the floor an endpoint's throughput is compared with, in the same app served the
same way.

    .venv/bin/python bench/service.py --port 8123 --state-dir /tmp/state
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.health import wait_until_healthy
from hbench.demo import demo_spec
from hbench.jobs.manifest import load_manifest
from hbench.jobs.pack import pack
from hbench.jobs.sealing import seal
from registry.demo import materialize

if TYPE_CHECKING:
    from fastapi import FastAPI

BIN = Path(sys.executable).parent
STARTUP_SECONDS = 90.0
NOOP_PATH = "/bench/noop"


def run_demo_job(folder: Path, job_name: str = "bench-demo", n_attempts: int = 2) -> Path:
    """Run the demo dataset with the oracle through `hbench run`, which seals the job."""
    registry = materialize(folder / "demo")
    spec = folder / f"{job_name}.spec.json"
    spec.write_text(json.dumps(demo_spec(registry, job_name, n_attempts=n_attempts)))
    subprocess.run(
        [str(BIN / "hbench"), "run", "--config", str(spec)],
        cwd=folder,
        env={**os.environ, "HARBOR_TELEMETRY": "0"},
        check=True,
        capture_output=True,
    )
    return folder / "jobs" / job_name


def variant(job: Path, folder: Path, number: int) -> Path:
    """A copy of a sealed job under a new Harbor job id, with its trials' times moved by
    `number` minutes, sealed again: a job of its own, which the service counts once."""
    dest = folder / f"variant-{number:05d}" / job.name
    shutil.copytree(job, dest)
    old_id = json.loads((dest / "result.json").read_text())["id"]
    new_id = str(uuid.uuid4())
    shift = timedelta(minutes=number)
    for path in dest.rglob("*.json"):
        if path.name == "manifest.json":
            continue
        data = _shifted(json.loads(path.read_text().replace(old_id, new_id)), shift)
        path.write_text(json.dumps(data, indent=4))
    seal(dest, spec_digest=load_manifest(job).spec_digest)
    return dest


def _shifted(value: Any, shift: timedelta) -> Any:
    if isinstance(value, dict):
        return {
            k: _moved(v, shift)
            if k in {"started_at", "finished_at", "updated_at", "created_at"}
            else _shifted(v, shift)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_shifted(v, shift) for v in value]
    return value


def _moved(value: Any, shift: timedelta) -> Any:
    if not isinstance(value, str):
        return value
    moved = datetime.fromisoformat(value.replace("Z", "+00:00")) + shift
    return moved.isoformat().replace("+00:00", "Z")


def packed(job: Path) -> bytes:
    """The job as `hbench jobs pack` sends it."""
    out = io.BytesIO()
    pack(job, out)
    return out.getvalue()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Service:
    """A service running in its own process: its address, state folder and database."""

    url: str
    state: Path
    database_url: str
    process: subprocess.Popen[bytes]
    log: Path


def service_env(database_url: str | None, settings: dict[str, str] | None) -> dict[str, str]:
    """The service's environment: this one's, without any `HBENCH_` setting of the shell's,
    with the database and the settings given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env["HARBOR_TELEMETRY"] = "0"
    # The benchmarks measure the requests: a regrade of each upload would share the cores
    # and hold every publish until it ended (bench/integrity.py times regrading itself).
    env["HBENCH_REGRADE_ENABLED"] = "false"
    if database_url:
        env["HBENCH_DATABASE_URL"] = database_url
    return {**env, **(settings or {})}


@contextmanager
def running_service(
    state: Path,
    *,
    database_url: str | None = None,
    noop: bool = False,
    env: dict[str, str] | None = None,
) -> Iterator[Service]:
    """`hbench-app serve` (or, with `noop`, this module serving the app with its no-op
    route) in a subprocess on a free loopback port, until the block ends; `env` holds
    `HBENCH_` settings for it."""
    port = free_port()
    log = state.parent / f"service-{port}.log"
    if noop:
        command = [sys.executable, __file__, "--port", str(port), "--state-dir", str(state)]
    else:
        command = [str(BIN / "hbench-app"), "serve", "--port", str(port), "--state-dir", str(state)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, env=service_env(database_url, env), stdout=sink, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(process, url, log)
        effective = database_url or f"sqlite+pysqlite:///{state / 'hbench.sqlite3'}"
        yield Service(url, state, effective, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_up(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    state = wait_until_healthy(url, process, STARTUP_SECONDS)
    if state == "exited":
        raise RuntimeError(f"the service exited:\n{log.read_text()[-3000:]}")
    if state == "late":
        raise RuntimeError("the service did not start")


def make_tokens(database_url: str, logins: list[str]) -> dict[str, str]:
    """An API token for each login (the account is made if new), through the service's own
    functions on its database; returns each login's token."""
    from app.auth.service import create_api_token, ensure_account  # noqa: PLC0415
    from app.db.session import Database  # noqa: PLC0415

    database = Database(database_url)
    tokens = {}
    try:
        with database.session() as session:
            for login in logins:
                account = ensure_account(session, login)
                _, tokens[login] = create_api_token(session, account, "bench")
    finally:
        database.dispose()
    return tokens


def with_noop(app: FastAPI) -> FastAPI:
    """The app with `GET /bench/noop` added: it answers at once, touching nothing."""

    @app.get(NOOP_PATH, include_in_schema=False)
    def noop() -> dict[str, str]:
        return {"status": "ok"}

    return app


def noop_app() -> FastAPI:
    """What each of several workers builds: the service's app from the environment, as
    `app.main:create_app` builds it, with the no-op route."""
    from app.main import create_app  # noqa: PLC0415

    return with_noop(create_app())


def serve_with_noop(port: int, state: Path) -> None:
    """Serve the app exactly as `hbench-app serve` does (its command, so the same
    settings, server configuration, access log and number of workers), plus
    `GET /bench/noop`: the command's app, and each worker's, is built with it."""
    import app.main  # noqa: PLC0415
    from app import cli  # noqa: PLC0415

    # `serve` imports `create_app` from `app.main` as it starts: it finds this one there.
    built = app.main.create_app
    app.main.create_app = lambda settings=None: with_noop(built(settings))
    cli.APP_FACTORY = f"{Path(__file__).stem}:{noop_app.__name__}"
    cli.serve(host="127.0.0.1", port=port, state_dir=state)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    serve_with_noop(args.port, args.state_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

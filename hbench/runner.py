"""Running Harbor for hbench: a spec as it was issued, or the resume of a stopped job.

hbench never edits the spec: it hands the file to `harbor run --config` and adds
only the two flags the service allows to differ (`--jobs-dir`, `--max-retries`).
A spec that names its job also goes into the job's folder before Harbor starts
(`hbench.jobs.spec_record`), so a run stopped before it was sealed still names it.
Checking an existing job's seal first (`hbench.jobs.reseal`) and sealing the
finished folder are the caller's steps. A job whose trials run in Docker first waits
for the daemon to answer (`hbench.docker_daemon`), and Harbor refused by its own check of
the daemon, before it began, is started again.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench.demo import ensure_image, lay_out, names_demo
from hbench.digest import spec_digest
from hbench.docker_daemon import DOCKER, uses_docker, wait_for_daemon
from hbench.errors import HbenchError
from hbench.jobs.spec_record import SPEC_NAME, read_recorded_spec, record_spec, recorded_spec_digest

DEFAULT_JOBS_DIR = "jobs"
HARBOR_TRIES = 3
"""Starts of Harbor, in all, when its own check of the Docker daemon refuses the run."""
DAEMON_REFUSAL = b"Docker daemon is not running"
"""What Harbor's check of the daemon says when its one `docker info` failed or was slow."""


@dataclass(frozen=True)
class Spec:
    """An issued job config, parsed only as far as hbench needs to find the job's folder."""

    path: Path
    data: dict[str, Any]
    raw: bytes
    """The file's bytes, as the job folder records them."""

    @property
    def job_name(self) -> str | None:
        name = self.data.get("job_name")
        return name if isinstance(name, str) and name else None

    def jobs_dir(self, override: Path | None) -> Path:
        if override is not None:
            return override
        configured = self.data.get("jobs_dir")
        return Path(configured) if isinstance(configured, str) else Path(DEFAULT_JOBS_DIR)

    def job_dir(self, override: Path | None) -> Path | None:
        """The folder Harbor writes the job to, when the spec names the job."""
        return None if self.job_name is None else self.jobs_dir(override) / self.job_name


def load_spec(path: Path) -> Spec:
    """Read a spec file; it must be a JSON object."""
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise HbenchError("spec-invalid", f"no spec file at {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HbenchError("spec-invalid", f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HbenchError("spec-invalid", f"{path} holds JSON, but not an object of job settings")
    return Spec(path=path, data=data, raw=raw)


def harbor_binary() -> str:
    """The `harbor` command beside this Python, else on PATH, else an error saying how to get it."""
    beside = Path(sys.executable).with_name("harbor")
    if beside.is_file():
        return str(beside)
    found = shutil.which("harbor")
    if found is None:
        raise HbenchError(
            "harbor-missing",
            "Harbor is not installed here; install it with: pip install 'hbench[harbor]'",
        )
    return found


def harbor_env() -> dict[str, str]:
    """The environment Harbor runs in: the caller's, with Harbor's telemetry turned off."""
    return {**os.environ, "HARBOR_TELEMETRY": "0"}


def run_spec(spec: Spec, *, jobs_dir: Path | None = None, max_retries: int | None = None) -> Path:
    """Run Harbor on the spec as it is; return the job's folder.

    A named job's folder gets the spec first (`hbench-spec.json`), unless Harbor already
    started that job, which then resumes: it must have been started from this spec.
    """
    root = spec.jobs_dir(jobs_dir)
    before = _job_folders(root)
    planned = spec.job_dir(jobs_dir)
    if planned is not None:
        _record(spec, planned)
    datasets = _datasets(spec.data)
    lay_out(datasets, Path.cwd())
    argv = [harbor_binary(), "run", "--config", str(spec.path), "--yes"]
    if jobs_dir is not None:
        argv += ["--jobs-dir", str(jobs_dir)]
    if max_retries is not None:
        argv += ["--max-retries", str(max_retries)]
    _run(argv, docker=uses_docker(spec.data.get("environment")), demo=names_demo(datasets))
    if spec.job_name is not None:
        return root / spec.job_name
    # Harbor names an unnamed job by the time it started: the one new folder is ours.
    created = sorted(_job_folders(root) - before)
    if len(created) != 1:
        raise HbenchError("harbor-failed", f"could not tell which folder under {root} Harbor wrote")
    return root / created[0]


def run_harbor(args: list[str], jobs_dir: Path) -> Path:
    """`harbor run` with these arguments (which must write under `jobs_dir`, `-o`); the job
    folder it wrote. For runs hbench builds itself, such as `hbench registry run`."""
    before = _job_folders(jobs_dir)
    # Harbor's default environment is Docker.
    _run([harbor_binary(), "run", *args], docker=_option(args, "--env", "-e") in (None, DOCKER))
    created = sorted(_job_folders(jobs_dir) - before)
    if len(created) != 1:
        message = f"could not tell which folder under {jobs_dir} Harbor wrote"
        raise HbenchError("harbor-failed", message)
    return jobs_dir / created[0]


def resume_job(job_dir: Path) -> None:
    """Continue a stopped job with Harbor, in place. A trial whose result.json was cut off
    as the job stopped is deleted first, as Harbor deletes one without result.json, so its
    rerun takes its place instead of standing beside it."""
    if not (job_dir / "config.json").is_file():
        raise HbenchError(
            "job-not-harbor", f"{job_dir} has no config.json, so Harbor can't resume it"
        )
    # Here, not at the top: the reader's models would cost every `hbench run` ~180 ms.
    from hbench.jobs.reader import cut_off_trials  # noqa: PLC0415

    for trial in cut_off_trials(job_dir):
        shutil.rmtree(trial)
        print(
            f"deleted the trial {trial.name}: its result.json was cut off as the job stopped, "
            "so it runs again",
            file=sys.stderr,
        )
    config = _read_config(job_dir / "config.json")
    datasets = _datasets(config)
    lay_out(datasets, Path.cwd())
    argv = [harbor_binary(), "job", "resume", "--job-path", str(job_dir)]
    _run(argv, docker=uses_docker(config.get("environment")), demo=names_demo(datasets))


def _option(args: list[str], *names: str) -> str | None:
    """The value of the last of these options in Harbor's arguments (`--env docker`)."""
    value = None
    for name, after in itertools.pairwise(args):
        if name in names:
            value = after
    return value


def _datasets(config: dict[str, Any]) -> list[object]:
    datasets = config.get("datasets")
    return list(datasets) if isinstance(datasets, list) else []


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # Harbor's own resume says what is wrong with it
    return data if isinstance(data, dict) else {}


def _record(spec: Spec, job_dir: Path) -> None:
    if not (job_dir / "config.json").is_file():
        record_spec(job_dir, spec.raw)
        return
    recorded = read_recorded_spec(job_dir)
    if recorded is None:
        return  # a job hbench did not start, or an older hbench: it names no spec to keep
    ours, theirs = spec_digest(spec.data), recorded_spec_digest(recorded)
    if theirs != ours:
        was = f"spec {theirs[:12]}…" if theirs else f"a {SPEC_NAME} that is no spec"
        raise HbenchError(
            "spec-folder-taken",
            f"{job_dir} already holds a job started from {was}, and this spec is "
            f"{ours[:12]}…; Harbor would resume that job. Run this spec with another "
            "--jobs-dir, or move the old job folder away",
            path=str(job_dir),
        )


def _job_folders(root: Path) -> set[str]:
    if not root.is_dir():
        return set()
    return {p.name for p in root.iterdir() if (p / "config.json").is_file()}


def _run(argv: list[str], *, docker: bool = False, demo: bool = False) -> None:
    """Run Harbor on this terminal, so its own progress display shows; fail on a non-zero
    exit. With `docker`, wait for the daemon first (and, for a job of the `demo` dataset,
    make its tasks' image), and start Harbor again (up to HARBOR_TRIES in all) when its own
    check of the daemon refused the run: that check comes before Harbor does anything, and
    one slow answer of a busy daemon fails it."""
    for attempt in range(1, HARBOR_TRIES + 1):
        if docker:
            wait_for_daemon()
            if demo and attempt == 1:
                ensure_image()
        code, refused = _harbor(argv, watch=DAEMON_REFUSAL if docker else None)
        if code == 0:
            return
        if not refused or attempt == HARBOR_TRIES:
            break
        print(
            f"Harbor's own check found the Docker daemon too slow to answer (try {attempt} of "
            f"{HARBOR_TRIES}); hbench waits for the daemon and starts Harbor again",
            file=sys.stderr,
        )
    raise HbenchError(
        "harbor-failed", f"Harbor exited with status {code}; its own output above says why"
    )


def _harbor(argv: list[str], *, watch: bytes | None) -> tuple[int, bool]:
    """Harbor's exit status, and whether its error output held `watch`: that output passes
    through line by line to this process's, the rest goes straight to the terminal."""
    if watch is None:
        return subprocess.run(argv, env=harbor_env(), check=False).returncode, False
    seen = False
    out = getattr(sys.stderr, "buffer", None)
    with subprocess.Popen(argv, env=harbor_env(), stderr=subprocess.PIPE) as harbor:
        for line in harbor.stderr or ():
            seen = seen or watch in line
            if out is not None:
                out.write(line)
                out.flush()
            else:
                sys.stderr.write(line.decode("utf-8", "replace"))
    return harbor.returncode, seen

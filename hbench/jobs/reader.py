"""Read a Harbor job folder into a `Job`, refusing damaged or foreign folders with a rule code.

`read_job` reads what Harbor 0.25 writes (`reference/harbor.md` §3) without
importing Harbor: the job's `config.json`, `result.json` and `lock.json`,
then every trial folder. It raises `HbenchError` only when the folder can't be
read as a job at all, naming every unreadable file at once; an interrupted
trial is read as a `Trial` without a result. Whether the job is finished and
complete is a separate question: `completeness_problems` lists every gap.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from hbench.errors import HbenchError, Problem
from hbench.jobs.assembly import assemble
from hbench.jobs.config import JobConfig
from hbench.jobs.files import JobLockFile, JobResultFile
from hbench.jobs.loading import CONFIG, LOCK, RESULT, collect, load_json, load_model, validate
from hbench.jobs.models import Job
from hbench.jobs.trial_reader import read_trial


def read_job(path: Path) -> Job:
    """Read the job folder at `path`.

    Raises `HbenchError` with `job-not-found`, `job-not-harbor`,
    `job-result-missing` or `job-json-invalid` (one problem per bad file).
    """
    _check_is_job_folder(path)
    problems: list[Problem] = []
    config = collect(problems, lambda: load_model(path / CONFIG, JobConfig, path))
    if not (path / RESULT).is_file():
        problems.insert(0, _result_missing(path))
        raise HbenchError.from_problems(problems)
    raw_result = collect(problems, lambda: load_json(path / RESULT, path))
    if isinstance(raw_result, dict) and not {"id", "n_total_trials"} & raw_result.keys():
        raise HbenchError(
            "job-not-harbor",
            f"{path / RESULT} is not a Harbor job result (it has no `id` or `n_total_trials`); "
            f"{path} holds something other than a Harbor job. Pass the folder Harbor wrote "
            "for the job, such as jobs/<job-name>",
            path=str(path),
        )
    result = collect(problems, lambda: validate(raw_result, JobResultFile, path / RESULT, path))
    lock = None
    if (path / LOCK).is_file():
        lock = collect(problems, lambda: load_model(path / LOCK, JobLockFile, path))
    trials = [
        trial
        for folder in _trial_folders(path)
        if (trial := collect(problems, partial(read_trial, folder, path))) is not None
    ]
    if problems or config is None or result is None:
        raise HbenchError.from_problems(problems)
    return assemble(path, config, result, lock, trials)


def _check_is_job_folder(path: Path) -> None:
    if not path.exists():
        raise HbenchError(
            "job-not-found",
            f"there is no folder at {path}. Pass the job's own folder, such as jobs/<job-name>",
            path=str(path),
        )
    if not path.is_dir():
        raise HbenchError(
            "job-not-found",
            f"{path} is a file, not a job folder. Pass the folder Harbor wrote, such as "
            "jobs/<job-name> (unpack an archive first)",
            path=str(path),
        )
    if (path / CONFIG).is_file():
        if (path.parent / CONFIG).is_file() and (path.parent / RESULT).is_file():
            raise HbenchError(
                "job-not-harbor",
                f"{path} is one trial of the job {path.parent}, not a job. "
                f"Pass the job's folder: {path.parent}",
                path=str(path),
            )
        return
    jobs = sorted(
        p.name for p in path.iterdir() if (p / CONFIG).is_file() and (p / RESULT).is_file()
    )
    if jobs:
        raise HbenchError(
            "job-not-harbor",
            f"{path} holds job folders ({', '.join(jobs[:5])}), not a job itself. "
            f"Pass one of them, such as {path / jobs[0]}",
            path=str(path),
        )
    raise HbenchError(
        "job-not-harbor",
        f"{path} has no config.json, so it is not a Harbor job folder. Pass the folder Harbor "
        "wrote for the job; it holds config.json, lock.json and result.json",
        path=str(path),
    )


def _result_missing(path: Path) -> Problem:
    return Problem(
        "job-result-missing",
        f"{path} has no result.json: Harbor stopped before it wrote one. "
        f"Continue the job with `hbench jobs resume -p {path}`",
        str(path / RESULT),
    )


def _trial_folders(path: Path) -> list[Path]:
    # Harbor treats every folder in a job as a trial (resume deletes those without a
    # result); dot-folders are tool state such as `.sources/`, never trials.
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))


def cut_off_trials(path: Path) -> list[Path]:
    """The trial folders of the job at `path` whose result.json is there but is not JSON
    (empty or cut off: Harbor was stopped while writing it). Harbor's resume deletes a
    trial folder without result.json and runs the trial again, but keeps one whose
    result.json it can't parse and runs the trial again beside it. A result that is JSON
    of another shape is not counted: that is an edit, not a stop."""
    return [
        folder
        for folder in _trial_folders(path)
        if (folder / RESULT).is_file()
        and collect([], partial(load_json, folder / RESULT, path)) is None
    ]

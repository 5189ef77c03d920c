"""Load one of a job's JSON files into its Harbor file model.

A file that can't be read, isn't JSON or hasn't Harbor's shape becomes a `job-json-invalid`
problem saying how to fix it; `collect` gathers them, so every bad file is reported at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from hbench.errors import Problem
from hbench.jobs.manifest import MANIFEST_NAME

CONFIG, RESULT, LOCK = "config.json", "result.json", "lock.json"


class _UnreadableError(Exception):
    """One file that could not be read; collected so every one is reported together."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.detail)
        self.problem = problem


def collect[T](problems: list[Problem], read: Callable[[], T]) -> T | None:
    """What `read` returns; None, its problem added to `problems`, when a file was unreadable."""
    try:
        return read()
    except _UnreadableError as unreadable:
        problems.append(unreadable.problem)
        return None


def load_json(file: Path, job: Path) -> Any:
    """The JSON in `file`, a file of the job folder `job`."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise _UnreadableError(_invalid(file, job, f"is not valid JSON ({exc})")) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = _invalid(file, job, f"is not valid JSON ({exc})", cut_off=True)
        raise _UnreadableError(problem) from None


def load_model[M: BaseModel](file: Path, model: type[M], job: Path) -> M:
    """`file`'s JSON, validated as `model`."""
    return validate(load_json(file, job), model, file, job)


def validate[M: BaseModel](data: Any, model: type[M], file: Path, job: Path) -> M:
    """`data`, read from `file`, validated as `model`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        fields = "; ".join(
            f"`{'.'.join(str(p) for p in e['loc']) or '(top level)'}`: {e['msg']}"
            for e in exc.errors()[:3]
        )
        raise _UnreadableError(
            _invalid(file, job, f"does not have Harbor's shape ({fields})")
        ) from None


def _invalid(file: Path, job: Path, what: str, *, cut_off: bool = False) -> Problem:
    """`job-json-invalid` for `file`; `cut_off` when it is not JSON at all, as a file
    Harbor was writing when the job stopped is left."""
    inside_trial = file.parent != job
    if (job / MANIFEST_NAME).is_file():
        # A sealed job's finished trials stay as sealed: resuming can't redo one.
        fix = "the file changed after the job was sealed; restore it, or run the job again"
    elif inside_trial and file.name == RESULT and cut_off:
        fix = (
            f"continue the job with `hbench jobs resume -p {job}`, which deletes the folder "
            f"{file.parent} and runs that trial again"
        )
    elif inside_trial and file.name == RESULT:
        fix = (
            f"delete the folder {file.parent} and continue the job with "
            f"`hbench jobs resume -p {job}`, which runs that trial again"
        )
    else:
        fix = (
            "the file was damaged or edited after Harbor wrote it; restore it, or run the job again"
        )
    return Problem("job-json-invalid", f"{file} {what}. Fix: {fix}", str(file))

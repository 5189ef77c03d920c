"""A job's identity: the Harbor version and job id its `lock.json` and `result.json` record,
and whether its manifest names the same job and Harbor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hbench.errors import HbenchError, Problem
from hbench.jobs.manifest import Manifest, invalid_problem


def identity_problems(manifest: Manifest, harbor_version: str, job_id: str) -> list[Problem]:
    """`manifest-invalid` when the manifest names another job or Harbor than the job's files."""
    problems = []
    if manifest.job_id != job_id:
        problems.append(
            invalid_problem(f"it names job {manifest.job_id}, but result.json has id {job_id}")
        )
    if manifest.harbor_version != harbor_version:
        problems.append(
            invalid_problem(
                f"it names Harbor {manifest.harbor_version}, but lock.json records {harbor_version}"
            )
        )
    return problems


def job_identity(job_dir: Path) -> tuple[str, str]:
    """The Harbor version (`lock.json` → `harbor.version`) and job id (`result.json` → `id`)."""
    if not (job_dir / "config.json").is_file():
        raise HbenchError(
            "job-not-harbor", f"{job_dir} has no config.json, so Harbor did not write it"
        )
    lock = _read_json(job_dir, "lock.json", "job-not-harbor")
    result = _read_json(job_dir, "result.json", "job-result-missing")
    harbor = lock.get("harbor")
    version = harbor.get("version") if isinstance(harbor, dict) else None
    if not isinstance(version, str) or not version:
        raise HbenchError(
            "job-json-invalid", "lock.json has no harbor.version string", path="lock.json"
        )
    job_id = result.get("id")
    if not isinstance(job_id, str) or not job_id:
        raise HbenchError("job-json-invalid", "result.json has no id string", path="result.json")
    return version, job_id


def _read_json(job_dir: Path, name: str, missing_code: str) -> dict[str, Any]:
    try:
        data: Any = json.loads((job_dir / name).read_bytes())
    except FileNotFoundError:
        raise HbenchError(
            missing_code, f"{job_dir} has no {name}; Harbor writes it for every job", path=name
        ) from None
    except ValueError as error:
        raise HbenchError("job-json-invalid", f"{name} is not JSON ({error})", path=name) from None
    except OSError as error:  # a folder of that name, say
        what = f"{name} can't be read as a file ({error.strerror})"
        raise HbenchError("job-json-invalid", what, path=name) from None
    if not isinstance(data, dict):
        raise HbenchError("job-json-invalid", f"{name} is not a JSON object", path=name)
    return data


def folder_identity_problems(job_dir: Path, manifest: Manifest) -> list[Problem]:
    """`identity_problems` against the folder's own `lock.json` and `result.json`."""
    # An unreadable lock.json or result.json is already a changed or missing file, or
    # the job reader's to report; only a readable one can contradict the manifest.
    try:
        harbor_version, job_id = job_identity(job_dir)
    except HbenchError:
        return []
    return identity_problems(manifest, harbor_version, job_id)

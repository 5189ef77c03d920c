"""Rewards: each trial's `result.json` against the reward files its verifier wrote.

Harbor writes each trial's rewards twice, the verifier's `reward.txt` or `reward.json` and
the trial's `result.json`; an edit that misses one copy shows here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from hbench.errors import Problem
from hbench.jobs.agreement import RERUN, close
from hbench.jobs.models import Job, Trial

REWARD_JSON, REWARD_TEXT = "reward.json", "reward.txt"
REWARD_FILE_MAX_BYTES = 1 << 20
"""A reward file is a number or a small JSON object; past this it is not one."""


def reward_problems(job: Job) -> list[Problem]:
    """`trial-reward-mismatch` for each trial whose recorded rewards its verifier didn't write."""
    problems = []
    for trial in job.results:
        if trial.steps is None:
            problems += _reward_problem(trial, trial.path / "verifier", trial.rewards, "")
            continue
        for step in trial.steps:
            where = trial.path / "steps" / step.step_name / "verifier"
            problems += _reward_problem(trial, where, step.rewards, f" (step {step.step_name})")
    return problems


def written_rewards(verifier_dir: Path) -> tuple[dict[str, float] | None, str]:
    """The rewards a verifier folder holds, parsed as Harbor 0.25 parses them
    (`harbor/verifier/verifier.py`): `reward.json` first, else `reward.txt`. None, with the
    file's name and why, when Harbor would have found no reward in it."""
    json_file, text_file = verifier_dir / REWARD_JSON, verifier_dir / REWARD_TEXT
    if json_file.is_file():
        return _json_rewards(_read(json_file)), REWARD_JSON
    if text_file.is_file():
        return _text_rewards(_read(text_file)), REWARD_TEXT
    return None, "no reward file"


def _read(file: Path) -> bytes | None:
    with file.open("rb") as stream:
        data = stream.read(REWARD_FILE_MAX_BYTES + 1)
    return data if len(data) <= REWARD_FILE_MAX_BYTES else None


def _json_rewards(data: bytes | None) -> dict[str, float] | None:
    if not data:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    rewards = {}
    for key, number in value.items():
        if not isinstance(number, int | float) or not math.isfinite(number):
            return None
        rewards[key] = float(number)
    return rewards


def _text_rewards(data: bytes | None) -> dict[str, float] | None:
    if not data:
        return None
    try:
        value = float(data.decode())
    except (UnicodeDecodeError, ValueError):
        return None
    return {"reward": value} if math.isfinite(value) else None


def _reward_problem(
    trial: Trial, verifier_dir: Path, recorded: Mapping[str, float] | None, step: str
) -> list[Problem]:
    # A trial without recorded rewards counts 0; whatever its verifier left, nothing is
    # gained by hiding a reward, so only recorded rewards are held to the files.
    if recorded is None:
        return []
    written, source = written_rewards(verifier_dir)
    if written is not None and _same_rewards(written, recorded):
        return []
    folder = f"{trial.trial_name}/{verifier_dir.relative_to(trial.path).as_posix()}"
    if written is None:
        seen = (
            f"{folder} holds no reward file"
            if source == "no reward file"
            else f"{folder}/{source} holds no reward Harbor could read"
        )
    else:
        seen = f"{folder}/{source} gives {_rewards_text(written)}"
    return [
        Problem(
            "trial-reward-mismatch",
            f"{seen}, but {trial.trial_name}/result.json records {_rewards_text(recorded)}"
            f"{step}: the rewards were edited after the verifier wrote them. {RERUN}",
            str(verifier_dir / source) if written is not None else str(verifier_dir),
        )
    ]


def _same_rewards(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)


def _rewards_text(rewards: Mapping[str, float]) -> str:
    return ", ".join(f"{key} {value:g}" for key, value in sorted(rewards.items()))

"""Redaction on real Harbor jobs of the demo dataset: nothing in them is replaced but the
keys planted there, so the rules' false positives on job files (results, logs, configs,
digests, UUIDs, trial names) are none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.uploads.redact import REDACTED, find_secrets, redact_folder_by_rule
from hbench.jobs.sealing import seal
from hbench.jobs.tree import scan
from tests.app.uploads.test_redact import RANDOM40, fake
from tests.conftest import HarborJobFactory

pytestmark = pytest.mark.harbor

GITHUB = fake("ghp_", 36)
ZETA = fake("", 40, seed=7)


def texts(job: Path) -> dict[str, bytes]:
    return {entry.path: (job / entry.path).read_bytes() for entry in scan(job).files}


@pytest.mark.parametrize(
    "run", [("oracle-k2", "-k", "2"), ("nop-1", "-a", "nop")], ids=["oracle", "nop"]
)
def test_a_real_job_holds_nothing_to_redact(
    harbor_job: HarborJobFactory, copy_job: Callable[[Path], Path], run: tuple[str, ...]
) -> None:
    job = copy_job(harbor_job(*run))
    seal(job)  # the manifest too: every digest in it is a sha256
    before = texts(job)
    found = {path: find_secrets(data, path) for path, data in before.items()}
    assert {path: hits for path, hits in found.items() if hits} == {}
    assert redact_folder_by_rule(job).files == {}
    assert texts(job) == before


def test_only_the_keys_planted_in_a_real_job_are_replaced(
    harbor_job: HarborJobFactory, copy_job: Callable[[Path], Path]
) -> None:
    job = copy_job(harbor_job("oracle-k2", "-k", "2"))
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    log = trial / "trial.log"
    log.write_text(log.read_text() + f"\nexport GITHUB_TOKEN={GITHUB}\n")
    config = json.loads((job / "config.json").read_text())
    config["agents"] = [{"name": "oracle", "kwargs": {"zeta_credential": ZETA, "zeta": RANDOM40}}]
    (job / "config.json").write_text(json.dumps(config, indent=4))
    seal(job)
    before = texts(job)

    result = redact_folder_by_rule(job)

    logged = f"{trial.name}/trial.log"
    assert result.rules == {
        "config.json": {"generic-credential": 1, "generic-high-entropy": 1},
        logged: {"github-pat": 1},
    }
    assert result.files == {"config.json": 2, logged: 1}
    after = texts(job)
    assert {p for p in before if before[p] != after[p]} == {"config.json", logged}
    assert after[logged] == before[logged].replace(GITHUB.encode(), REDACTED.encode())
    kwargs = json.loads(after["config.json"])["agents"][0]["kwargs"]
    assert kwargs == {"zeta_credential": REDACTED, "zeta": REDACTED}

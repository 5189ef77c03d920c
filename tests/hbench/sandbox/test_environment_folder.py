"""The sandbox's own folder: made when a trial first uses it and removed when it stops, so
an environment Harbor makes and never starts (a regrade makes several) leaves nothing."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from harbor.models.task.config import EnvironmentConfig
from harbor.models.trial.paths import TrialPaths

from hbench.sandbox.environment import BubblewrapEnvironment


def sandbox(tmp_path: Path) -> BubblewrapEnvironment:
    (tmp_path / "environment").mkdir(exist_ok=True)
    return BubblewrapEnvironment(
        environment_dir=tmp_path / "environment",
        environment_name="hello",
        session_id="hello__abc__env",
        trial_paths=TrialPaths(tmp_path / "trial"),
        task_env_config=EnvironmentConfig(),
    )


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_an_environment_never_started_makes_no_folder(tmp_path: Path, temp_root: Path) -> None:
    environment = sandbox(tmp_path)
    assert environment.capabilities.disable_internet  # made and asked, as Harbor does
    assert list(temp_root.iterdir()) == []
    asyncio.run(environment.stop(delete=True))  # and a stop of it has nothing to remove
    assert list(temp_root.iterdir()) == []


def test_a_started_environment_runs_in_its_folder_and_stopping_removes_it(
    tmp_path: Path, temp_root: Path
) -> None:
    environment = sandbox(tmp_path)

    async def run() -> str:
        await environment.start(force_build=False)
        result = await environment.exec("echo made > /app/out.txt && cat /app/out.txt")
        return result.stdout or ""

    assert asyncio.run(run()).strip() == "made"
    (folder,) = temp_root.iterdir()
    assert folder.name.startswith("hbench-sandbox-")
    assert (folder / "app" / "out.txt").read_text() == "made\n"
    asyncio.run(environment.stop(delete=True))
    assert list(temp_root.iterdir()) == []

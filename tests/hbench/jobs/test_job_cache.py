"""The machine's cache of real Harbor jobs (tests/support/jobcache.py): a job made fresh has
the cached one's shape, a session's copy names the session's folders, and each job is made
once however many workers ask for it at once."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from tests.conftest import HarborJobFactory, harbor_run
from tests.support.jobcache import PRUNE_AFTER_SECONDS, Build, JobCache, shape

ORACLE = ("oracle-k2", "-k", "2")


def test_a_job_run_now_has_the_cached_jobs_shape(
    harbor_job: HarborJobFactory, demo_registry: Path, tmp_path: Path
) -> None:
    cached = harbor_job(*ORACLE)
    fresh = harbor_run(*ORACLE)(tmp_path, demo_registry)
    assert shape(fresh) == shape(cached)
    assert len(shape(cached)) > 20  # the job's own files and each task's trial files


def test_a_sessions_copy_names_the_sessions_dataset_and_folder_not_the_cache(
    harbor_job: HarborJobFactory, demo_registry: Path, job_cache: JobCache
) -> None:
    job = harbor_job(*ORACLE)
    config = json.loads((job / "config.json").read_text())
    assert [d["registry_path"] for d in config["datasets"]] == [str(demo_registry)]
    trial = next(p for p in job.iterdir() if p.is_dir())
    result = json.loads((trial / "result.json").read_text())
    assert str(job) in result["trial_uri"]
    assert result["task_id"]["path"].startswith(str(demo_registry.parent))
    mentions = [p for p in job.rglob("*") if p.is_file() and str(job_cache.folder) in p.read_text()]
    assert mentions == []


def _recorder(calls: list[Path]) -> Build:
    def build(root: Path, registry: Path) -> Path:
        calls.append(root)
        job = root / "jobs" / "made"
        job.mkdir(parents=True)
        (job / "paths.txt").write_text(f"{registry}\n{job}\n")
        (job / "link").symlink_to(job / "paths.txt")
        return job

    return build


def test_a_job_is_made_once_for_every_worker_that_asks_at_once(tmp_path: Path) -> None:
    calls: list[Path] = []
    build = _recorder(calls)
    cache = JobCache(tmp_path / "cache")
    start = threading.Barrier(4)
    entries = []

    def ask() -> None:
        start.wait()
        entries.append(cache.get("made", ("-k", "2"), build))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len({entry.folder for entry in entries}) == 1
    assert sorted(p.name for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")) == [
        entries[0].folder.name
    ]


def test_a_copy_moves_the_paths_the_job_recorded_and_leaves_the_cache_as_made(
    tmp_path: Path,
) -> None:
    cache = JobCache(tmp_path / "cache")
    entry = cache.get("made", (), _recorder([]))
    before = (entry.job / "paths.txt").read_text()
    dataset = tmp_path / "session" / "dataset"
    job = entry.checkout(tmp_path / "session" / "root", dataset)
    assert job == tmp_path / "session" / "root" / "jobs" / "made"
    assert (job / "paths.txt").read_text() == f"{dataset / 'registry.json'}\n{job}\n"
    assert (job / "link").readlink() == job / "paths.txt"
    (job / "paths.txt").write_text("changed by a test")
    assert (entry.job / "paths.txt").read_text() == before


def test_the_key_changes_with_the_flags_and_the_recipe_and_nothing_else(tmp_path: Path) -> None:
    cache = JobCache(tmp_path)
    build = harbor_run(*ORACLE)
    again = JobCache(tmp_path)
    assert cache.key("harbor-run", ORACLE, build) == again.key("harbor-run", ORACLE, build)
    assert cache.key("harbor-run", ORACLE, build) != cache.key("harbor-run", ("nop",), build)
    assert cache.key("harbor-run", ORACLE, build) != cache.key("softened", ORACLE, build)
    assert cache.key("harbor-run", ORACLE, build) != cache.key("harbor-run", ORACLE, _recorder([]))


def test_a_job_no_session_read_for_two_weeks_is_pruned_and_one_read_since_is_kept(
    tmp_path: Path,
) -> None:
    cache = JobCache(tmp_path)
    old = cache.get("old", (), _recorder([]))
    kept = cache.get("kept", (), _recorder([]))
    weeks_ago = time.time() - PRUNE_AFTER_SECONDS - 60
    for entry in (old, kept):
        os.utime(entry.folder / "meta.json", (weeks_ago, weeks_ago))
    assert cache.get("kept", (), _recorder([])) == kept  # read again: kept
    assert cache.prune() == [old.folder.name]
    assert not old.folder.exists() and kept.job.is_dir()

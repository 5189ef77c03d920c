"""A job's benchmark, found through the registry's `harbor.dataset` fields, as `hbench push`
and `hbench registry run` name it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hbench import runsummary
from hbench.errors import HbenchError
from hbench.jobs.reader import read_job
from registry.loader import load_registry
from tests.conftest import HarborJobFactory

REGISTRY = load_registry()


@pytest.mark.parametrize(
    ("name", "version", "slugs"),
    [
        ("swebench-verified", "1.0", {"swe-bench-verified"}),
        ("swebench-verified", None, {"swe-bench-verified"}),
        ("terminal-bench", "2.0", {"terminal-bench-2"}),
        ("terminal-bench-sample", "2.0", {"terminal-bench-2-sample"}),
        ("livecodebench", "6.0", {"livecodebench-v6"}),
        ("swebenchpro", "1.0", {"swe-bench-pro"}),
        ("hbench-demo", "1.0", {"hbench-demo"}),
        ("humaneval", None, {"humaneval"}),  # a slug itself
        ("no-such-dataset", "1.0", set()),
    ],
)
def test_harbor_dataset_names_map_to_registry_slugs(
    name: str, version: str | None, slugs: set[str]
) -> None:
    assert runsummary.benchmarks_named(REGISTRY, name, version) == slugs


@pytest.mark.harbor
def test_a_job_of_a_registry_dataset_is_pushed_as_its_benchmark(
    harbor_job: HarborJobFactory, tmp_path: Path
) -> None:
    job = tmp_path / "job"
    source = harbor_job("oracle-k1")
    shutil.copytree(source, job)
    config = json.loads((job / "config.json").read_text())
    config["datasets"] = [{"name": "swebench-verified", "version": "1.0"}]
    (job / "config.json").write_text(json.dumps(config))
    assert runsummary.benchmark_of(read_job(job), REGISTRY) == "swe-bench-verified"

    config["datasets"] = [{"name": "nobody-knows", "version": "1.0"}]
    (job / "config.json").write_text(json.dumps(config))
    with pytest.raises(HbenchError) as refused:
        runsummary.benchmark_of(read_job(job), REGISTRY)
    assert refused.value.code == "push-benchmark-unknown"
    assert "--benchmark" in str(refused.value)

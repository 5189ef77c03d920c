"""Every rule of the skill document's `RunSubmission` table: valid bodies are accepted, and
each out-of-range field is refused as `validation_error` in the skill's error shape."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.v1.schemas import RunSubmission

from .conftest import assert_skill_error, push, summary

SLUG = st.from_regex(r"[a-z0-9-]{1,100}", fullmatch=True)
# A name shows as itself: no control, format or bidi character, and something visible
# (registry.naming.hidden_character); prose may break lines and hold format characters.
SHOWN = st.characters(exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))
PROSE = st.characters(exclude_categories=("Cc", "Cs")) | st.sampled_from("\t\n\r")


def names(max_size: int) -> st.SearchStrategy[str]:
    return st.text(SHOWN, min_size=1, max_size=max_size).filter(str.strip)


TEXT = names(200)
OPTIONAL_COUNT = st.none() | st.integers(min_value=0, max_value=2**63 - 1)
OPTIONAL_VERSION = st.none() | st.text(PROSE, max_size=50)
FINITE = {"allow_nan": False, "allow_infinity": False}


@st.composite
def submissions(draw: st.DrawFn) -> dict[str, Any]:
    """Any body the table allows."""
    metric = draw(st.sampled_from(["accuracy", "pass@1", "resolved_rate", "elo", "Elo"]))
    top = 10_000 if metric.lower() == "elo" else 100
    rewards = st.lists(
        st.fixed_dictionaries({"task": names(200), "reward": st.floats(**FINITE)}),
        max_size=20,
    )
    return {
        "benchmarkSlug": draw(SLUG),
        "model": draw(TEXT),
        "harness": draw(names(100)),
        "taskCount": draw(st.integers(1, 100_000)),
        "nAttempts": draw(st.integers(1, 1000)),
        "score": draw(st.floats(0, top, **FINITE)),
        "metric": metric,
        "tokensUsed": draw(OPTIONAL_COUNT),
        "costUsd": draw(st.none() | st.floats(min_value=0, **FINITE)),
        "harborVersion": draw(OPTIONAL_VERSION),
        "cliVersion": draw(OPTIONAL_VERSION),
        "resultsHash": draw(st.none() | st.from_regex(r"[0-9a-f]{64}", fullmatch=True)),
        "taskRewards": draw(st.none() | rewards),
        "notes": draw(st.none() | st.text(PROSE, max_size=2000)),
    }


@given(submissions())
def test_every_body_the_table_allows_is_valid(body: dict[str, Any]) -> None:
    parsed = RunSubmission.model_validate(body)
    assert parsed.model_dump(by_alias=True) == body


# Each rule broken once: (field, a value out of its range).
BROKEN: list[tuple[str, Any]] = [
    ("benchmarkSlug", ""),
    ("benchmarkSlug", "MMLU-Pro"),
    ("benchmarkSlug", "mmlu_pro"),
    ("benchmarkSlug", "a" * 101),
    ("model", ""),
    ("model", "m" * 201),
    ("harness", ""),
    ("harness", "h" * 101),
    ("taskCount", 0),
    ("taskCount", 100_001),
    ("taskCount", 1.5),
    ("taskCount", True),
    ("nAttempts", 0),
    ("nAttempts", 1001),
    ("score", -0.01),
    ("score", 100.01),
    ("score", "84"),
    ("metric", ""),
    ("metric", "m" * 51),
    ("tokensUsed", -1),
    ("costUsd", -0.5),
    ("harborVersion", "v" * 51),
    ("cliVersion", "v" * 51),
    ("resultsHash", "abc"),
    ("resultsHash", "g" * 64),
    ("taskRewards", [{"task": "t", "reward": 1}] * 5001),
    ("taskRewards", [{"task": "t" * 201, "reward": 1}]),
    ("taskRewards", [{"task": "", "reward": 1}]),
    ("taskRewards", [{"task": "t", "reward": 1, "output": "the model's answer"}]),
    ("notes", "n" * 2001),
    ("transcript", "outputs have no field"),
]


def test_each_broken_rule_is_a_validation_error(client: TestClient) -> None:
    # One app for every rule: starting one per case would cost more than the cases.
    for field, value in BROKEN:
        answer = push(client, summary(**{field: value}))
        error = assert_skill_error(answer, 400, "validation_error", "validation_error")
        assert error["message"] == "Invalid input"
        assert error["details"][0]["path"][0] == field, (field, value, error["details"])
    assert client.get("/v1/runs").json()["pagination"]["total"] == 0


@pytest.mark.parametrize(
    "field", ["benchmarkSlug", "model", "harness", "taskCount", "nAttempts", "score", "metric"]
)
def test_each_required_field_is_required(field: str) -> None:
    body = summary()
    del body[field]
    with pytest.raises(ValidationError):
        RunSubmission.model_validate(body)


def test_elo_scores_go_to_10000_and_no_further() -> None:
    assert RunSubmission.model_validate(summary(metric="elo", score=10_000)).score == 10_000
    with pytest.raises(ValidationError):
        RunSubmission.model_validate(summary(metric="elo", score=10_000.5))
    with pytest.raises(ValidationError, match="unless metric is `elo`"):
        RunSubmission.model_validate(summary(metric="accuracy", score=1500))


@st.composite
def out_of_range(draw: st.DrawFn) -> dict[str, Any]:
    """A valid body with one numeric field pushed past its bounds."""
    field, low, high = draw(
        st.sampled_from(
            [("taskCount", 1, 100_000), ("nAttempts", 1, 1000), ("score", 0, 100),
             ("tokensUsed", 0, None), ("costUsd", 0, None)]
        )
    )  # fmt: skip
    below = (
        st.integers(max_value=low - 1)
        if field != "costUsd"
        else st.floats(max_value=-1e-9, **FINITE)
    )
    beyond = [below] + ([st.integers(min_value=high + 1, max_value=10**12)] if high else [])
    return summary(**{field: draw(st.one_of(beyond))})


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=out_of_range())
def test_out_of_range_bodies_are_refused_in_the_skill_shape(
    client: TestClient, body: dict[str, Any]
) -> None:
    assert_skill_error(push(client, body), 400, "validation_error", "validation_error")

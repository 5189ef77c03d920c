"""`POST /v1/runs` with the registry's own slugs and the model spellings people push
(../shared/spec/benchhub-skill.md: `model` is "free text as typed; server normalizes to
`modelSlug` when it can"): every benchmark slug of the registry is taken, anything else is a
`validation_error` that names the field, and each spelling of a registry model lands on
that model's one slug, in the run, its listing and the aggregates. Issuing a run takes the
same spellings of a board's model (../shared/spec/hbench-issue-a-run.txt: "HumanEvalFix on
Qwen2.5-Coder 7B")."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import ReproducedRun
from app.registry import default_registry
from app.runs.lookup import look_up
from app.runs.schemas import IssueRequest

from .conftest import push, summary

REGISTRY = default_registry()

# How people write the registry's models: display names, Harbor's names, provider and
# router prefixes, dots for dashes, full-width letters, odd spacing and case.
SPELLINGS = {
    "qwen2.5-coder-7b": [
        "Qwen2.5-Coder 7B",
        "qwen2.5-coder-7b",
        "Qwen2.5-Coder 7B Instruct",
        "Qwen/Qwen2.5-Coder-7B-Instruct",
        "hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct",
        "openai/Qwen/Qwen2.5-Coder-7B-Instruct",
        "ollama/qwen2.5-coder:7b",
        "QWEN2.5-CODER-7B",
        "  qwen2.5-coder-7b ",
        "\uff31\uff57\uff45\uff4e2.5-Coder 7B",  # full-width "Qwen"
    ],
    "claude-sonnet-4-5": [
        "Claude Sonnet 4.5",
        "claude-sonnet-4-5",
        "claude-sonnet-4.5",
        "anthropic/claude-sonnet-4.5",
        "openrouter/anthropic/claude-sonnet-4.5",
        "anthropic/claude-sonnet-4-5-20250929",
    ],
    "claude-haiku-4-5": ["Claude Haiku 4.5", "claude-haiku-4.5", "anthropic/claude-haiku-4-5"],
    "gpt-5-mini": ["GPT-5 mini", "openai/gpt-5-mini", "GPT-5-Mini", "azure/gpt-5-mini"],
    "gpt-5": ["GPT-5", "openai/gpt-5-2025-08-07", "OpenAI/GPT-5"],
}


def count(db: Session) -> int:
    db.rollback()
    return db.scalar(select(func.count()).select_from(ReproducedRun)) or 0


@pytest.mark.parametrize("slug", sorted(REGISTRY.benchmarks))
def test_every_benchmark_slug_of_the_registry_is_taken(client: TestClient, slug: str) -> None:
    answer = push(client, summary(benchmarkSlug=slug))
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"]["benchmarkSlug"] == slug


@pytest.mark.parametrize(
    "slug",
    [
        "MMLU-Pro",  # the display name, not the slug
        "mmlu_pro",
        "mmlu-pro ",
        "mmlu\u2010pro",  # a Unicode hyphen
        "\uff4d\uff4d\uff4c\uff55-pro",  # full-width letters
        "mmlu-pro\u200b",  # a zero-width space
        "mmlu-pr\u043e",  # Cyrillic o
        "swe-bench-verified@1.0",
        "",
        "x" * 101,
    ],
)
def test_a_slug_spelled_otherwise_is_a_validation_error_and_stores_nothing(
    client: TestClient, db: Session, slug: str
) -> None:
    answer = push(client, summary(benchmarkSlug=slug))
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "validation_error"
    assert any("benchmarkSlug" in str(detail) for detail in error["details"]), error
    assert count(db) == 0


@pytest.mark.parametrize(
    ("spelling", "slug"), [(text, slug) for slug, texts in SPELLINGS.items() for text in texts]
)
def test_each_spelling_of_a_registry_model_is_its_one_slug(
    client: TestClient, spelling: str, slug: str
) -> None:
    answer = push(client, summary(model=spelling))
    assert answer.status_code == 201, answer.text
    data = answer.json()["data"]
    assert (data["model"], data["modelSlug"]) == (spelling, slug)
    assert len(client.get("/v1/runs", params={"model": spelling}).json()["data"]) == 1


def test_every_spelling_is_counted_in_one_aggregate(client: TestClient) -> None:
    for texts in SPELLINGS.values():
        for text in texts:
            assert push(client, summary(model=text)).status_code == 201

    aggregates = client.get("/v1/bench/reproduced").json()["data"]
    counts = {a["modelSlug"]: a["runCount"] for a in aggregates}
    assert counts == {slug: len(texts) for slug, texts in SPELLINGS.items()}


@pytest.mark.parametrize("model", ["", " ", "x" * 201])
def test_a_model_out_of_bounds_is_a_validation_error(
    client: TestClient, db: Session, model: str
) -> None:
    answer = push(client, summary(model=model))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "validation_error"
    assert count(db) == 0


@pytest.mark.parametrize("spelling", SPELLINGS["qwen2.5-coder-7b"])
def test_issuing_finds_the_board_by_any_spelling_of_its_model(spelling: str) -> None:
    request = IssueRequest.model_validate(
        {"dataset": "humanevalfix@1.0", "model": spelling, "declarative": {"agent": "terminus-2"}}
    )
    lookup, problems = look_up(request, REGISTRY)
    assert problems == []
    assert lookup.board is not None and lookup.board.slug == "humanevalfix-qwen2.5-coder-7b"


@pytest.mark.parametrize("spelling", ["Qwen2.5-Coder 7B", "qwen/qwen2.5-coder-7b-instruct"])
def test_a_board_named_beside_a_spelling_of_its_model_is_no_mismatch(spelling: str) -> None:
    request = IssueRequest.model_validate(
        {"arena": "humanevalfix-qwen2.5-coder-7b", "model": spelling,
         "declarative": {"agent": "terminus-2"}}
    )  # fmt: skip
    assert look_up(request, REGISTRY)[1] == []


def test_another_model_beside_a_board_is_still_a_mismatch() -> None:
    request = IssueRequest.model_validate(
        {"arena": "humanevalfix-qwen2.5-coder-7b", "model": "Qwen2.5-Coder 32B",
         "declarative": {"agent": "terminus-2"}}
    )  # fmt: skip
    assert [p.code for p in look_up(request, REGISTRY)[1]] == ["run-board-mismatch"]

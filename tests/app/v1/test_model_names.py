"""One model, one `modelSlug`: every spelling a run may be pushed with is stored, listed and
summarised under the same slug, and asked for by any of them (`registry.naming`)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from .conftest import push, summary

SPELLINGS = ("openai/gpt-5", "GPT-5", "OpenAI/GPT-5-2025-08-07", "gpt-5")
UNKNOWN = ("Anthropic/Claude-Opus-4-8", "anthropic/claude-opus-4-8", "claude-opus-4-8")


def test_every_spelling_of_a_model_is_one_slug_in_the_runs_and_the_aggregates(
    client: TestClient,
) -> None:
    for model in (*SPELLINGS, *UNKNOWN):
        assert push(client, summary(model=model)).status_code == 201

    runs = client.get("/v1/runs", params={"limit": 100}).json()["data"]
    assert {r["model"]: r["modelSlug"] for r in runs} == {
        **dict.fromkeys(SPELLINGS, "gpt-5"),
        **dict.fromkeys(UNKNOWN, "claude-opus-4-8"),
    }
    aggregates = client.get("/v1/bench/reproduced").json()["data"]
    counts = {a["modelSlug"]: a["runCount"] for a in aggregates}
    assert counts == {"gpt-5": len(SPELLINGS), "claude-opus-4-8": len(UNKNOWN)}


def test_a_model_is_asked_for_in_any_of_its_spellings(client: TestClient) -> None:
    for model in (*SPELLINGS, *UNKNOWN):
        assert push(client, summary(model=model)).status_code == 201

    for asked in ("anthropic/claude-opus-4-8", "Claude-Opus-4-8", "CLAUDE OPUS 4 8"):
        listed = client.get("/v1/runs", params={"model": asked}).json()["data"]
        assert len(listed) == len(UNKNOWN), asked
        (aggregate,) = client.get("/v1/bench/reproduced", params={"model": asked}).json()["data"]
        assert aggregate["modelSlug"] == "claude-opus-4-8"
        assert aggregate["runCount"] == len(UNKNOWN)
    gpt = client.get("/v1/runs", params={"model": "OpenAI/GPT-5"}).json()["data"]
    assert len(gpt) == len(SPELLINGS)

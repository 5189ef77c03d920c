"""`GET /v1/bench/reproduced`: aggregates per benchmark, model and harness, cached 60 seconds."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from app.v1.aggregates import Scored, aggregate

from .conftest import NOW, FakeClock, push, summary


def test_the_aggregates_are_the_median_mean_min_and_max() -> None:
    runs = [
        Scored("mmlu-pro", "gpt-5", "codex", score, NOW + timedelta(minutes=i))
        for i, score in enumerate([70.0, 90.0, 80.0, 100.0])
    ]
    runs.append(Scored("mmlu-pro", "gpt-5", "openhands", 50.0, NOW))

    codex, openhands = aggregate(runs)

    assert codex.model_dump(by_alias=True) == {
        "benchmarkSlug": "mmlu-pro", "modelSlug": "gpt-5", "harness": "codex", "runCount": 4,
        "median": 85.0, "mean": 85.0, "min": 70.0, "max": 100.0,
        "lastRunAt": "2026-10-30T12:03:00.000Z",
    }  # fmt: skip
    assert (openhands.run_count, openhands.median, openhands.min) == (1, 50.0, 50.0)


def test_the_answer_is_cached_for_60_seconds(client: TestClient, clock: FakeClock) -> None:
    for score in (60, 70, 95):
        assert push(client, summary(score=score)).status_code == 201
    push(client, summary(model="some/unlisted-model", score=10))

    first = client.get("/v1/bench/reproduced", params={"benchmark": "mmlu-pro"}).json()

    assert first["cachedAt"] == "2026-10-30T12:00:00.000Z"
    by_model = {a["modelSlug"]: a for a in first["data"]}
    assert by_model["gpt-5"]["runCount"] == 3
    assert (by_model["gpt-5"]["median"], by_model["gpt-5"]["max"]) == (70, 95)
    # A model the registry doesn't know is summarised under its normalised name.
    assert by_model["unlisted-model"]["runCount"] == 1

    assert push(client, summary(score=100)).status_code == 201
    clock.now += timedelta(seconds=59)
    assert client.get("/v1/bench/reproduced", params={"benchmark": "mmlu-pro"}).json() == first

    clock.now += timedelta(seconds=1)
    fresh = client.get("/v1/bench/reproduced", params={"benchmark": "mmlu-pro"}).json()
    assert fresh["cachedAt"] == "2026-10-30T12:01:00.000Z"
    gpt5 = next(a for a in fresh["data"] if a["modelSlug"] == "gpt-5")
    assert (gpt5["runCount"], gpt5["median"], gpt5["mean"]) == (4, 82.5, 81.25)


def test_each_query_is_cached_on_its_own(client: TestClient, clock: FakeClock) -> None:
    assert client.get("/v1/bench/reproduced", params={"model": "gpt-5"}).json()["data"] == []
    push(client, summary())
    # Another question is answered afresh; the first stays as it was for its minute.
    assert len(client.get("/v1/bench/reproduced").json()["data"]) == 1
    assert client.get("/v1/bench/reproduced", params={"model": "gpt-5"}).json()["data"] == []
    clock.now += timedelta(seconds=60)
    assert len(client.get("/v1/bench/reproduced", params={"model": "gpt-5"}).json()["data"]) == 1

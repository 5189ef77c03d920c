"""`POST /v1/runs`, `GET /v1/runs` and `GET /v1/runs/{id}`, as the skill document describes them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.clock import get_clock
from app.main import create_app
from app.settings import Settings
from tests.app.conftest import REMOTE, TokenFactory, bearer

from .conftest import NOW, FakeClock, assert_skill_error, push, summary

RUN_ID = re.compile(r"^run_[0-9A-HJKMNP-TV-Z]{26}$")


def test_a_summary_is_stored_and_answered_as_the_skill_shows(
    client: TestClient, clock: FakeClock
) -> None:
    answer = push(client, summary())

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert set(body) == {"data", "url"}
    data = body["data"]
    assert RUN_ID.match(data["id"])
    assert body["url"].endswith(f"/site/runs/{data['id']}.html")  # its page on the site
    assert data["modelSlug"] == "gpt-5"  # by the name Harbor records
    assert data["status"] == "uploaded"
    assert data["userId"] is None
    assert data["createdAt"] == "2026-10-30T12:00:00.000Z"
    # No job backs a pushed summary: it holds no evidence level, and says so.
    assert data["evidence"]["levels"] == []
    assert data["evidence"]["description"].startswith("A score summary pushed to the runs API")
    sent = summary()
    assert {k: data[k] for k in sent} == sent
    assert client.get(f"/v1/runs/{data['id']}").json() == body


@pytest.mark.parametrize(
    ("model", "slug"),
    [
        ("gpt-5", "gpt-5"),
        ("OpenAI/GPT-5-2025-08-07", "gpt-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("some/Unknown_Model", "unknown-model"),
    ],
)
def test_the_model_is_normalised_when_the_registry_knows_it(
    client: TestClient, model: str, slug: str | None
) -> None:
    answer = push(client, summary(model=model))
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"]["modelSlug"] == slug
    assert answer.json()["data"]["model"] == model


def test_a_push_with_an_api_token_is_attributed(
    client: TestClient, make_token: TokenFactory
) -> None:
    answer = push(TestClient(client.app, **REMOTE), summary(), **bearer(make_token("alice")))
    assert answer.status_code == 201, answer.text
    assert answer.json()["data"]["userId"] == "alice"


def test_a_bad_token_is_refused_in_the_skill_shape(client: TestClient) -> None:
    answer = push(client, summary(), authorization="Bearer hpg_not-a-real-token")
    assert_skill_error(answer, 401, "token-invalid", "authentication_error")


def test_a_benchmark_outside_the_registry_is_a_validation_error(client: TestClient) -> None:
    answer = push(client, summary(benchmarkSlug="no-such-benchmark"))
    error = assert_skill_error(answer, 400, "validation_error", "validation_error")
    assert error["details"][0]["path"] == ["benchmarkSlug"]
    assert client.get("/v1/runs").json()["pagination"]["total"] == 0


@pytest.mark.postgres
def test_the_31st_anonymous_push_in_a_day_is_rate_limited(
    client: TestClient, clock: FakeClock
) -> None:
    for n in range(30):
        clock.now += timedelta(minutes=1)
        assert push(client, summary()).status_code == 201, n

    refused = push(client, summary())

    error = assert_skill_error(refused, 429, "rate_limited", "rate_limit_error")
    assert error["message"] == (
        "Too many run submissions (30/24h per IP, 200/24h per user). Try again later."
    )
    # A slot frees when the first push, a minute after NOW, leaves the 24-hour window.
    first = NOW + timedelta(minutes=1)
    assert int(refused.headers["retry-after"]) == (first + timedelta(hours=24) - clock.now).seconds
    other_address = TestClient(client.app, **REMOTE)
    assert push(other_address, summary()).status_code == 201
    clock.now = first + timedelta(hours=24)
    assert push(client, summary()).status_code == 201


@pytest.fixture
def limited(settings: Settings, clock: FakeClock) -> Iterator[TestClient]:
    """The service with small limits: 5 pushes per address, 3 per account, a day."""
    app = create_app(
        settings.model_copy(update={"runs_per_ip_per_day": 5, "runs_per_user_per_day": 3})
    )
    app.dependency_overrides[get_clock] = lambda: clock
    with TestClient(app, **REMOTE) as client:
        yield client


@pytest.mark.postgres
def test_an_account_pushes_up_to_its_own_limit(
    limited: TestClient, make_token: TokenFactory
) -> None:
    alice = bearer(make_token("alice"))
    for _ in range(3):
        assert push(limited, summary(), **alice).status_code == 201
    refused = push(limited, summary(), **alice)
    error = assert_skill_error(refused, 429, "rate_limited", "rate_limit_error")
    assert "5/24h per IP, 3/24h per user" in error["message"]
    # The address's anonymous limit still has room: 3 of its 5 are taken.
    assert push(limited, summary()).status_code == 201
    assert push(limited, summary()).status_code == 201
    assert push(limited, summary()).status_code == 429


@pytest.mark.postgres
def test_a_second_account_on_one_address_does_not_multiply_the_limit(
    limited: TestClient, make_token: TokenFactory
) -> None:
    for _ in range(3):
        assert push(limited, summary(), **bearer(make_token("alice"))).status_code == 201
    refused = push(limited, summary(), **bearer(make_token("bob")))
    assert_skill_error(refused, 429, "rate_limited", "rate_limit_error")


def pushed(client: TestClient, clock: FakeClock, **changes: Any) -> str:
    clock.now += timedelta(seconds=1)
    answer = push(client, summary(**changes))
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["data"]["id"]
    return run_id


def test_the_list_filters_and_pages_newest_first(client: TestClient, clock: FakeClock) -> None:
    old = pushed(client, clock)
    other_model = pushed(client, clock, model="anthropic/claude-sonnet-4-5")
    other_harness = pushed(client, clock, harness="openhands")
    other_benchmark = pushed(client, clock, benchmarkSlug="gpqa-diamond")
    new = pushed(client, clock)

    def ids(**query: Any) -> list[str]:
        answer = client.get("/v1/runs", params=query)
        assert answer.status_code == 200, answer.text
        return [run["id"] for run in answer.json()["data"]]

    assert ids() == [new, other_benchmark, other_harness, other_model, old]
    assert ids(benchmark="mmlu-pro") == [new, other_harness, other_model, old]
    assert ids(model="gpt-5") == [new, other_benchmark, other_harness, old]
    assert ids(model="anthropic/claude-sonnet-4-5") == [other_model]
    assert ids(harness="openhands") == [other_harness]
    assert ids(benchmark="mmlu-pro", model="gpt-5", harness="codex") == [new, old]
    page = client.get("/v1/runs", params={"limit": 2, "page": 2}).json()
    assert [run["id"] for run in page["data"]] == [other_harness, other_model]
    assert page["pagination"] == {"page": 2, "limit": 2, "total": 5, "totalPages": 3}
    assert client.get("/v1/runs", params={"limit": 2, "page": 4}).json()["data"] == []


@pytest.mark.parametrize(
    "query", [{"limit": 0}, {"limit": 101}, {"page": 0}, {"page": 2**61}, {"limit": "x"}]
)
def test_list_bounds_are_validation_errors(client: TestClient, query: dict[str, Any]) -> None:
    answer = client.get("/v1/runs", params=query)
    error = assert_skill_error(answer, 400, "validation_error", "validation_error")
    assert error["details"][0]["path"] == [next(iter(query))]


def test_an_unknown_run_is_not_found(client: TestClient) -> None:
    answer = client.get("/v1/runs/run_00000000000000000000000000")
    assert_skill_error(answer, 404, "not_found", "not_found_error")

"""Fixtures for the runs API: a valid summary, pushing it, and the app's clock set by the test."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response

from app.clock import get_clock

NOW = datetime(2026, 10, 30, 12, 0, tzinfo=UTC)


def summary(**changes: Any) -> dict[str, Any]:
    """The skill document's example body, on a benchmark of our registry."""
    body: dict[str, Any] = {
        "benchmarkSlug": "mmlu-pro",
        "model": "openai/gpt-5",
        "harness": "codex",
        "taskCount": 50,
        "nAttempts": 1,
        "score": 84,
        "metric": "accuracy",
        "tokensUsed": None,
        "costUsd": None,
        "harborVersion": "0.23.1",
        "cliVersion": "0.2.0",
        "resultsHash": "3b7e0f0c2a4d6e8f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7089",
        "taskRewards": [
            {"task": "mmlu-pro-0001", "reward": 1},
            {"task": "mmlu-pro-0002", "reward": 0},
        ],
        "notes": "temperature 0; 1 attempt; default timeouts",
    }
    return {**body, **changes}


class FakeClock:
    """The service's clock, moved only by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(app: FastAPI) -> FakeClock:
    fake = FakeClock(NOW)
    app.dependency_overrides[get_clock] = lambda: fake
    return fake


def push(client: TestClient, body: dict[str, Any], **headers: str) -> Response:
    return client.post("/v1/runs", json=body, headers=headers)


def assert_skill_error(answer: Response, status: int, code: str, kind: str) -> dict[str, Any]:
    """The skill document's error shape, exactly: one `error` with four keys."""
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details", "type"}
    assert body["error"]["code"] == code
    assert body["error"]["type"] == kind
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]

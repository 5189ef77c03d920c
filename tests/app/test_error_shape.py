"""Every `/api` error has one shape, whatever raised it (after datasette's test_error_shape)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.auth.tokens import new_api_token
from app.errors import envelope, status_for
from app.main import create_app
from app.settings import Settings
from hbench.codes import CODE_NAMES, CODES, GUIDE_PATH
from hbench.errors import HbenchError, Problem

from .conftest import LOCAL, REMOTE, bearer

LEAKY = "password=hunter2 at /srv/secret/path"


def assert_envelope(answer: Any, status: int, code: str) -> dict[str, Any]:
    """The envelope's exact shape: four keys, the code at the end of the detail, its
    Troubleshooting entry, and every problem listed with its code, message and path."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    body: dict[str, Any] = answer.json()
    assert set(body) == {"detail", "code", "help", "errors"}
    assert body["code"] == code
    assert body["help"] == f"{GUIDE_PATH}#{code}"
    assert body["detail"].endswith(f" ({code})")
    assert body["errors"], "errors lists at least the first problem"
    for error in body["errors"]:
        assert set(error) == {"code", "message", "path"}
        assert error["code"] in CODE_NAMES
        assert isinstance(error["message"], str) and error["message"]
    assert body["errors"][0]["code"] == code
    assert body["detail"].startswith(body["errors"][0]["message"])
    return body


@pytest.fixture
def app_with_failures(settings: Settings) -> FastAPI:
    """An app of its own with two extra routes: one refuses with several problems, one
    crashes (not the `app` fixture's, which other tests are given after this one)."""
    app = create_app(settings)

    @app.get("/api/test/refusal")
    def refusal() -> None:
        raise HbenchError.from_problems(
            [
                Problem("manifest-file-changed", "a changed file", "trial-1/result.json"),
                Problem("manifest-file-extra", "an added file", "notes.txt"),
            ]
        )

    @app.get("/api/test/crash")
    def crash() -> None:
        raise RuntimeError(LEAKY)

    return app


@pytest.fixture
def calls(app_with_failures: FastAPI) -> Any:
    with TestClient(app_with_failures, raise_server_exceptions=False, **LOCAL) as local:
        yield local, TestClient(app_with_failures, raise_server_exceptions=False, **REMOTE)


CASES = [
    # (who calls, method, path, extra request arguments, status, code)
    ("local", "GET", "/api/nowhere", {}, 404, "endpoint-not-found"),
    ("local", "GET", "/api", {}, 404, "endpoint-not-found"),
    ("local", "POST", "/api/health", {}, 405, "method-not-allowed"),
    ("local", "POST", "/api/tokens", {"json": {}}, 422, "request-invalid"),
    ("local", "POST", "/api/tokens", {"json": {"name": "x" * 101}}, 422, "request-invalid"),
    (
        "local",
        "POST",
        "/api/tokens",
        {"content": b"{not json", "headers": {"content-type": "application/json"}},
        422,
        "request-invalid",
    ),
    ("local", "DELETE", "/api/tokens/not-a-uuid", {}, 422, "request-invalid"),
    (
        "local",
        "DELETE",
        "/api/tokens/00000000-0000-4000-8000-000000000000",
        {},
        404,
        "token-not-found",
    ),
    ("remote", "GET", "/api/me", {}, 401, "auth-required"),
    ("remote", "GET", "/api/me", {"headers": bearer(new_api_token())}, 401, "token-invalid"),
    ("local", "GET", "/api/test/refusal", {}, 422, "manifest-file-changed"),
    ("local", "GET", "/api/test/crash", {}, 500, "internal-error"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{case[1]} {case[2]} -> {case[5]}" for case in CASES])
def test_error_shape(calls: Any, case: tuple[str, str, str, dict[str, Any], int, str]) -> None:
    who, method, path, extra, status, code = case
    local, remote = calls
    answer = (local if who == "local" else remote).request(method, path, **extra)
    assert_envelope(answer, status, code)


def test_every_problem_is_listed_with_its_path(calls: Any) -> None:
    local, _ = calls
    body = assert_envelope(local.get("/api/test/refusal"), 422, "manifest-file-changed")
    assert body["detail"] == "a changed file; and 1 more problem (manifest-file-changed)"
    assert body["errors"] == [
        {
            "code": "manifest-file-changed",
            "message": "a changed file",
            "path": "trial-1/result.json",
        },
        {"code": "manifest-file-extra", "message": "an added file", "path": "notes.txt"},
    ]


def test_validation_errors_name_each_field(calls: Any) -> None:
    local, _ = calls
    answer = local.post("/api/tokens", json={"name": "", "colour": "red"})
    body = assert_envelope(answer, 422, "request-invalid")
    assert sorted(error["path"] for error in body["errors"]) == ["body.colour", "body.name"]


def test_a_crash_shows_nothing_of_itself(calls: Any) -> None:
    local, _ = calls
    answer = local.get("/api/test/crash")
    assert answer.json()["detail"] == (
        "the service failed while handling the request (internal-error)"
    )
    assert "hunter2" not in answer.text and "Traceback" not in answer.text


def test_a_method_refusal_names_the_allowed_method(calls: Any) -> None:
    local, _ = calls
    answer = local.post("/api/health")
    assert "GET" in answer.json()["detail"]
    assert answer.headers["allow"] == "GET"


def test_pages_outside_the_api_keep_their_own_errors(calls: Any) -> None:
    local, _ = calls
    answer = local.get("/no-such-page")
    assert answer.status_code == 404
    assert "code" not in answer.json()


def test_each_codes_status_is_the_catalogues() -> None:
    assert all(status_for(code) == rule.status for code, rule in CODES.items())
    assert status_for("manifest-file-changed") == 422
    assert status_for("auth-required") == 401
    assert all(400 <= rule.status < 600 for rule in CODES.values())


def test_an_errors_help_is_an_entry_on_the_troubleshooting_page(calls: Any) -> None:
    local, _ = calls
    body = assert_envelope(local.get("/api/test/refusal"), 422, "manifest-file-changed")
    path, _, anchor = body["help"].partition("#")
    page = local.get(path)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert f'id="{anchor}"' in page.text


def test_one_problem_is_its_own_detail() -> None:
    problem = Problem("token-revoked", "the API token hpg_abcdefgh… was revoked")
    assert envelope([problem]).model_dump() == {
        "detail": problem.detail,
        "code": "token-revoked",
        "help": "/guide/troubleshooting#token-revoked",
        "errors": [{"code": "token-revoked", "message": problem.message, "path": None}],
    }

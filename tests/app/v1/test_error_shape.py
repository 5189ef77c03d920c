"""The two error shapes, pinned side by side: `/api` answers with the envelope, `/v1` with
the skill document's `{"error": {...}}`, whatever raised the refusal."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from hbench.errors import HbenchError

from ..conftest import LOCAL
from .conftest import assert_skill_error


def test_each_prefix_keeps_its_own_shape(settings: Settings) -> None:
    app = create_app(settings)  # its own: the test adds routes to it

    @app.get("/v1/test/refusal")
    @app.get("/api/test/refusal")
    def refusal() -> None:
        raise HbenchError("maintainer-only", "only maintainers")

    @app.get("/v1/test/crash")
    @app.get("/api/test/crash")
    def crash() -> None:
        raise RuntimeError("a secret at /srv/path")

    crashing = TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1:8000")
    with TestClient(app, **LOCAL) as client:
        for prefix in ("/api", "/v1"):
            answers = {
                "refused": client.get(f"{prefix}/test/refusal"),
                "unknown": client.get(f"{prefix}/no/such/thing"),
                "invalid": client.get(
                    f"{prefix}/runs" if prefix == "/v1" else "/api/local-runs", params={"limit": 0}
                ),
                "crashed": crashing.get(f"{prefix}/test/crash"),
            }
            if prefix == "/api":
                for answer in answers.values():
                    assert set(answer.json()) == {"detail", "code", "help", "errors"}, answer.text
                assert answers["refused"].json()["code"] == "maintainer-only"
                assert answers["crashed"].json()["code"] == "internal-error"
            else:
                assert_skill_error(answers["refused"], 403, "maintainer-only", "permission_error")
                assert_skill_error(answers["unknown"], 404, "endpoint-not-found", "not_found_error")
                assert_skill_error(answers["invalid"], 400, "validation_error", "validation_error")
                crashed = assert_skill_error(answers["crashed"], 500, "internal-error", "api_error")
                assert "secret" not in crashed["message"]

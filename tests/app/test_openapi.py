"""The API page describes every endpoint: a summary, what it answers, and how it refuses."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from hbench.codes import CODES

ENVELOPE = {"$ref": "#/components/schemas/ErrorEnvelope"}


def api_operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, item in spec["paths"].items()
        if path.startswith("/api/")
        for method, operation in item.items()
    ]


def test_every_endpoint_is_described(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    operations = api_operations(spec)
    assert {(method, path) for method, path, _ in operations} >= {
        ("GET", "/api/health"),
        ("GET", "/api/me"),
        ("GET", "/api/tokens"),
        ("POST", "/api/tokens"),
        ("DELETE", "/api/tokens/{token_id}"),
    }
    for method, path, operation in operations:
        where = f"{method} {path}"
        assert operation.get("summary"), f"{where} has no summary"
        statuses = operation["responses"]
        success = [status for status in statuses if status.startswith("2")]
        assert success, f"{where} documents no success"
        if success != ["204"]:
            content = statuses[success[0]]["content"]
            # JSON, or a file's bytes (a job's download) declared as binary.
            schema = (content.get("application/json") or content.get("application/gzip"))["schema"]
            assert schema, f"{where} answers with no schema"
        errors = {status: answer for status, answer in statuses.items() if status[0] in "45"}
        assert "500" in errors, f"{where} does not document internal-error"
        for status, answer in errors.items():
            assert answer["content"]["application/json"]["schema"] == ENVELOPE, (where, status)
            assert "`" in answer["description"], f"{where} {status} names no rule code"
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_endpoints_with_a_body_or_path_document_request_invalid(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for method, path, operation in api_operations(spec):
        if "requestBody" in operation or "{" in path:
            assert "`request-invalid`" in operation["responses"]["422"]["description"], (
                method,
                path,
            )


def test_the_api_page_is_served(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "openapi.json" in page.text


def test_each_documented_code_is_under_its_catalogue_status(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for method, path, operation in api_operations(spec):
        for status, answer in operation["responses"].items():
            if status[0] in "45":
                for code in re.findall(r"`([a-z0-9_-]+)`", answer["description"]):
                    assert CODES[code].status == int(status), (method, path, code)


def test_the_error_schema_carries_the_help_address(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["ErrorEnvelope"]
    assert {"detail", "code", "help", "errors"} <= set(schema["required"])
    assert "Troubleshooting" in schema["properties"]["help"]["description"]

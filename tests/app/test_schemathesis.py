"""Every operation of the service's OpenAPI schema, fuzzed by schemathesis against the
service running on loopback, signed in with an API token: none answers with a 5xx.

A quick sample runs by default; `HBENCH_SCHEMATHESIS_EXAMPLES=500` runs that many
examples per operation, and every boundary value of every parameter as well.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from app.auth.service import create_api_token, ensure_account
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.hbench.cli.service import serving

QUICK_EXAMPLES = 5
EXAMPLES = int(os.environ.get("HBENCH_SCHEMATHESIS_EXAMPLES", str(QUICK_EXAMPLES)))

pytestmark = pytest.mark.timeout(1800)

DECLINED = {("POST", "/api/github/webhooks"): (503, "webhook-not-configured")}
"""Operations a service in local mode declines by design, with the status and rule code
their schema documents: no webhook secret is set, so none is taken."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The service on a loopback port, on SQLite, and an API token; their address and token."""
    state = tmp_path_factory.mktemp("schemathesis") / "state"
    app = create_app(Settings(state_dir=state, writer_enabled=False))
    with serving(app) as url:
        database = Database(f"sqlite+pysqlite:///{state / 'hbench.sqlite3'}")
        with database.session() as session:
            _, token = create_api_token(session, ensure_account(session, "fuzzer"), "fuzz")
        database.dispose()
        yield url, token


# An upload's body is a .tar.gz: sent as the bytes generated, like any binary body.
schemathesis.serializer.alias("application/gzip", "application/octet-stream")

# The schema as the app serves it at /openapi.json, read from the app itself at collection;
# the requests go to the running service.
schema = schemathesis.openapi.from_dict(
    create_app(Settings(state_dir=Path(tempfile.gettempdir()) / "hbench-schema")).openapi()
)
# The coverage phase (every boundary value of every parameter) runs in the long mode only:
# it sends the most requests, and the quick sample keeps the suite fast.
schema.config.phases.coverage.enabled = EXAMPLES > QUICK_EXAMPLES


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_no_operation_answers_with_a_server_error(
    case: schemathesis.Case, served: tuple[str, str]
) -> None:
    url, token = served
    response = case.call(base_url=url, headers={"authorization": f"Bearer {token}"})
    declined = DECLINED.get((case.operation.method.upper(), case.operation.path))
    if declined is not None and response.status_code == declined[0]:
        assert response.json()["code"] == declined[1], response.text
        return
    case.validate_response(response, checks=[not_a_server_error])


def test_the_token_signs_in(served: tuple[str, str]) -> None:
    """The fuzzing reaches past sign-in: the token's list answers 200, not a refusal."""
    url, token = served
    answer = httpx.get(f"{url}/api/bench/jobs", headers={"authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text

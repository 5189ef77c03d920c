"""What an upload's redaction records: each file's count, as before, and over the whole job
each rule's, in its summary, in the API's job detail and on its Your-bench page; and the
cap on how many values one upload's redaction replaces."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.main import create_app
from app.settings import Settings

from ..conftest import LOCAL, NO_REGRADES
from .conftest import assert_nothing_stored, job_rows, upload
from .jobs import SealedJob, packed, reseal, trial_folders
from .test_redaction import ANTHROPIC_KEY, GITHUB_TOKEN

RULES = {"anthropic-api-key": 1, "generic-credential": 2, "github-pat": 1}


def with_keys(sealed: SealedJob, folder: Path) -> tuple[bytes, dict[str, int]]:
    """The sealed job with four keys in two of a trial's files; and its files' counts."""
    job = sealed.copy_to(folder)
    agent = trial_folders(job)[0] / "agent"
    (agent / "oracle.txt").write_text(
        f"using key {ANTHROPIC_KEY}\nexport GITHUB_TOKEN={GITHUB_TOKEN}\n"
        "OPENAI_API_KEY=Xq7Lm2Pz9Rt4Vw8Ny3Kb6\n"
    )
    (agent / "env.txt").write_text("DB_PASSWORD=Wc4nQ8rTz1Lp6Ys3\n")
    reseal(job)
    trial = agent.parent.name
    return packed(job), {f"{trial}/agent/env.txt": 1, f"{trial}/agent/oracle.txt": 3}


def test_the_job_records_its_redactions_per_rule_beside_per_file(
    client: TestClient, *, db: Session, sealed: SealedJob, tmp_path: Path
) -> None:
    archive, files = with_keys(sealed, tmp_path)

    answer = upload(client, archive)

    assert answer.status_code == 201, answer.text
    accepted = answer.json()
    # The upload's answer is as it was: per file.
    assert accepted["redactions"] == {"total": 4, "files": files}
    (row,) = job_rows(db)
    assert row.redactions == files
    assert row.summary["redaction_rules"] == RULES
    detail = client.get(f"/api/bench/jobs/{accepted['id']}").json()
    assert detail["redaction_rules"] == RULES
    assert {key: detail[key] for key in accepted} == accepted
    page = client.get(f"/bench/jobs/{accepted['id']}").text
    table = page.split('<table id="redaction-rules">', 1)[1].split("</table>", 1)[0]
    for rule, count in RULES.items():
        assert f'<tr><th scope="row"><code>{rule}</code></th><td>{count}</td></tr>' in table
    assert "4 values that looked like keys were replaced" in page
    assert ANTHROPIC_KEY not in page and GITHUB_TOKEN not in page


def test_a_job_with_nothing_redacted_records_no_rules(
    client: TestClient, sealed_archive: bytes
) -> None:
    accepted = upload(client, sealed_archive).json()

    detail = client.get(f"/api/bench/jobs/{accepted['id']}").json()

    assert detail["redaction_rules"] == {} and detail["summary"]["redaction_rules"] == {}
    assert 'id="redactions-title"' not in client.get(f"/bench/jobs/{accepted['id']}").text


def test_an_upload_past_the_redaction_cap_is_refused_and_stores_nothing(
    *, db: Session, database_url: str, sealed: SealedJob, tmp_path: Path
) -> None:
    settings = Settings(
        state_dir=tmp_path / "state", database_url=database_url, upload_max_redactions=3,
        **NO_REGRADES,
    )  # fmt: skip
    archive, files = with_keys(sealed, tmp_path)

    with TestClient(create_app(settings), **LOCAL) as client:  # type: ignore[arg-type]
        answer = upload(client, archive)

    assert answer.status_code == 422, answer.text
    body = answer.json()
    (problem,) = body["errors"]
    assert body["code"] == problem["code"] == "upload-too-many-secrets"
    assert problem["path"] in files  # the file where the count passed 3
    assert "more than 3 key-like values" in problem["message"]
    assert ANTHROPIC_KEY not in answer.text
    assert_nothing_stored(db, settings)

"""`hbench-app reports …` and `hbench-app deny …` on the state directory's database."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from app.auth.service import ensure_account, find_account
from app.cli import app
from app.datarepo.changes import from_outbox
from app.db.models import Job, JobStatus, OutboxEntry, Report

from .conftest import MESSAGE, public_job

runner = CliRunner()


def hbench_app(database_url: str, tmp_path: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(
        app, [*args, "--state-dir", str(tmp_path)], env={"HBENCH_DATABASE_URL": database_url}
    )
    return result.exit_code, result.output


def test_reports_list_and_take_down(tmp_path: Path, database_url: str, db: Session) -> None:
    job = public_job(db)
    report = Report(
        reporter_id=ensure_account(db, "rita").id, entry=job.entry, job_ref=job.id, message=MESSAGE
    )
    db.add(report)
    db.commit()

    code, listed = hbench_app(database_url, tmp_path, "reports", "list")
    assert code == 0, listed
    assert f"#{report.id}\topen" in listed and MESSAGE in listed

    code, out = hbench_app(
        database_url, tmp_path, "reports", "take-down", str(report.id),
        "--reason", "breaks-terms", "--note", "Not the dataset it claims.",
    )  # fmt: skip
    assert code == 0, out
    assert f"Took down run {job.id} on hbench-demo (breaks-terms)" in out
    (entry,) = db.scalars(select(OutboxEntry))
    assert (
        from_outbox(entry.kind, entry.payload).model_dump()["note"] == "Not the dataset it claims."
    )
    db.expire_all()
    assert db.get_one(Job, job.id).status is JobStatus.TAKEN_DOWN

    code, out = hbench_app(
        database_url,
        tmp_path,
        "reports",
        "take-down",
        str(report.id),
        "--reason",
        "x",
        "--note",
        "y",
    )
    assert code == 1
    assert "(report-closed)" in out


def test_a_take_down_with_an_unknown_reason_exits_1(
    tmp_path: Path, database_url: str, db: Session
) -> None:
    job = public_job(db)
    report = Report(
        reporter_id=ensure_account(db, "rita").id, run=str(job.id), job_ref=job.id, message=MESSAGE
    )
    db.add(report)
    db.commit()
    code, out = hbench_app(
        database_url,
        tmp_path,
        "reports",
        "take-down",
        str(report.id),
        "--reason",
        "nope",
        "--note",
        "x",
    )
    assert code == 1
    assert "(takedown-reason-unknown)" in out
    assert db.scalars(select(OutboxEntry)).all() == []


def test_deny_add_list_remove(tmp_path: Path, database_url: str, db: Session) -> None:
    assert hbench_app(database_url, tmp_path, "deny", "add", "mallory")[0] == 0
    code, listed = hbench_app(database_url, tmp_path, "deny", "list")
    assert (code, listed.split()) == (0, ["mallory"])
    account = find_account(db, "mallory")
    assert account is not None and account.is_denied
    assert hbench_app(database_url, tmp_path, "deny", "remove", "mallory")[0] == 0
    db.expire_all()
    assert not account.is_denied
    code, out = hbench_app(database_url, tmp_path, "deny", "remove", "mallory")
    assert code == 1 and "(deny-account-not-found)" in out

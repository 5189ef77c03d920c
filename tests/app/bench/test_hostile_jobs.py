"""Jobs made to test the guides' promises from outside our fixtures
(../shared/spec/hbench-upload-a-job.txt, hbench-withdraw-delete-report.txt): a key in a
trial's task name, of a registry's dataset and of tasks from a folder; a job of tasks from a
folder, kept privately; a published job deleted without being withdrawn and uploaded again;
and a copy whose times are the same moments spelled in another offset."""

from __future__ import annotations

import html
import json
import tarfile
import unicodedata
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Job, JobStatus
from app.settings import Settings

from ..conftest import TokenFactory, bearer
from ..publish.conftest import job_row, publish, uploaded, variant
from .conftest import FakeClock, assert_nothing_stored, job_rows, upload
from .jobs import SealedJob, edit_json, packed, reseal, trial_folders

KEY = "sk-ant-api03-" + "Qm4Zt8Vw2Lp6Rx1Nb9Ky3Hd7" * 3 + "Qm4Zt8Vw2Lp6Rx1Nb9" + "AA"
"""Shaped as Anthropic's keys are, random enough for gitleaks' rule."""


def stored_text(db: Session, settings: Settings) -> str:
    """Every job row's columns and every stored file, unpacked, as one text to search."""
    db.rollback()
    texts = [
        json.dumps({c.name: getattr(row, c.name) for c in Job.__table__.columns}, default=str)
        for row in db.scalars(select(Job))
    ]
    for path in sorted(p for p in settings.blob_dir.rglob("*") if p.is_file()):
        try:
            with tarfile.open(path, "r:*") as tar:
                for member in tar.getmembers():
                    handle = tar.extractfile(member)
                    texts.append(member.name)
                    if handle is not None:
                        texts.append(handle.read().decode("utf-8", "replace"))
        except tarfile.TarError:
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def test_a_key_in_a_trials_task_name_is_redacted_in_the_refusal_and_nothing_is_stored(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed: SealedJob, tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    job = sealed.copy_to(tmp_path)
    trial = trial_folders(job)[0]
    # Both attempts of one task, so the job stays complete.
    task = json.loads((trial / "result.json").read_text())["task_name"]
    for each in trial_folders(job):
        if json.loads((each / "result.json").read_text())["task_name"] == task:
            edit_json(each / "result.json", lambda data: data.update(task_name=f"task-{KEY}"))
    reseal(job)
    token = make_token("alice")

    answer = upload(client, packed(job), **bearer(token))

    # The task is not the dataset's: refused (a trial lock.json never planned), or kept on no
    # board (task files other than the pinned ones). Either way no answer, page or stored
    # row or file holds the key, and a refusal stores nothing.
    assert KEY[:24] not in answer.text
    assert "task-[REDACTED]" in answer.text
    if answer.status_code == 201:
        job_id = answer.json()["id"]
        assert answer.json()["boards"]["fits"] == []
        for path in (f"/api/bench/jobs/{job_id}", f"/bench/jobs/{job_id}", "/bench"):
            shown = client.get(path, headers=bearer(token))
            assert shown.status_code == 200 and KEY[:24] not in shown.text, path
        assert KEY[:24] not in stored_text(db, settings)
    else:
        assert (answer.status_code, answer.json()["code"]) == (422, "job-plan-mismatch")
        assert_nothing_stored(db, settings)


def test_a_published_job_deleted_unwithdrawn_keeps_its_score_and_its_copy_no_board(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    sealed_archive: bytes, tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    alice = make_token("alice")
    first = uploaded(client, sealed_archive, alice)
    assert publish(client, first, alice).status_code == 200
    deleted = client.delete(
        f"/api/bench/jobs/{first}", params={"confirm": sealed.path.name}, headers=bearer(alice)
    )
    assert deleted.status_code == 200, deleted.text
    db.rollback()
    row = db.get(Job, uuid.UUID(first))
    assert row is not None and row.published_at is not None and row.withdrawn_at is None

    for body in (sealed_archive, variant(sealed, tmp_path)):
        copy = uploaded(client, body, alice)
        shown = client.get(f"/api/bench/jobs/{copy}", headers=bearer(alice)).json()
        boards = shown["boards"]
        assert (boards["fits"], boards["opens"]) == ([], None), boards
        assert [note["code"] for note in boards["notes"]] == ["bench-published-before"]
        refused = publish(client, copy, alice)
        assert (refused.status_code, refused.json()["code"]) == (409, "bench-published-before")
        assert refused.json()["detail"].endswith("(bench-published-before)")
        db.rollback()
        copy_row = db.get(Job, uuid.UUID(copy))
        assert copy_row is not None and copy_row.status is JobStatus.PRIVATE


def respelled(value: str, zone: timezone) -> str:
    """The same moment written in another zone's offset (`Z` as `+00:00`, or `+01:00`)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(zone).isoformat()


def copy_respelled(sealed: SealedJob, folder: Path, zone: timezone) -> bytes:
    """A copy under a new job id whose trials' times are the same moments spelled in `zone`."""
    job = sealed.copy_to(folder)
    old_id, new_id = json.loads((job / "result.json").read_text())["id"], str(uuid.uuid4())
    for path in job.rglob("*.json"):
        if path.name != "manifest.json":
            path.write_text(path.read_text().replace(old_id, new_id))

    def change(data: dict[str, object]) -> None:
        for key in ("started_at", "finished_at"):
            value = data.get(key)
            if isinstance(value, str):
                data[key] = respelled(value, zone)

    for trial in trial_folders(job):
        edit_json(trial / "result.json", change)
    reseal(job)
    return packed(job)


@pytest.mark.parametrize("hours", [0, 1])
def test_a_copy_whose_times_are_spelled_otherwise_is_still_recognised(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    sealed_archive: bytes, tmp_path: Path, clock: FakeClock, hours: int,
) -> None:  # fmt: skip
    token = make_token("alice")
    first = uploaded(client, sealed_archive, token)
    assert publish(client, first, token).status_code == 200

    answer = upload(client, copy_respelled(sealed, tmp_path, timezone(timedelta(hours=hours))),
                    **bearer(token))  # fmt: skip

    assert answer.status_code == 201, answer.text
    assert answer.json()["boards"]["fits"] == []
    refused = publish(client, answer.json()["id"], token)
    assert (refused.status_code, refused.json()["code"]) == (409, "bench-published-before")
    assert refused.json()["errors"][0]["message"].startswith("a trial of ")
    assert len(job_rows(db)) == 2


def folder_job(sealed: SealedJob, folder: Path, rename: dict[str, str] | None = None) -> Path:
    """A copy of the job as if its tasks came from a folder (`harbor run --path`), with task
    names changed by `rename` in every file that names them (the trials' folders keep
    theirs, as Harbor names a trial after its task only in part)."""
    job = sealed.copy_to(folder)
    config = json.loads((job / "config.json").read_text())
    names = config["datasets"][0].get("task_names")
    config["datasets"] = [{"path": "/home/me/my-tasks", "task_names": names}]
    (job / "config.json").write_text(json.dumps(config, indent=4))
    for path in job.rglob("*.json"):
        if path.name != "manifest.json":
            text = path.read_text()
            for old, new in (rename or {}).items():
                text = text.replace(f'"{old}"', f'"{new}"')
            path.write_text(text)
    reseal(job)
    return job


def test_a_job_of_tasks_from_a_folder_is_kept_privately_and_offered_no_board(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")

    answer = upload(client, packed(folder_job(sealed, tmp_path)), **bearer(token))

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["status"] == "private" and body["dataset"] is None
    assert (body["boards"]["fits"], body["boards"]["opens"]) == ([], None)
    assert [note["code"] for note in body["boards"]["notes"]] == ["board-local-tasks"]
    assert body["actions"]["publish"]["code"] == "board-local-tasks"
    for board in (None, "hbench-demo"):
        refused = publish(client, body["id"], token, board=board)
        assert refused.status_code >= 400 and refused.json()["code"], refused.text
    assert job_row(db, body["id"]).status is JobStatus.PRIVATE
    listed = client.get("/api/bench/jobs", headers=bearer(token)).json()
    assert body["id"] in json.dumps(listed)


def test_a_key_in_a_folder_jobs_task_name_is_redacted_everywhere_it_is_kept(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed: SealedJob, tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    token = make_token("alice")
    job = folder_job(sealed, tmp_path, rename={"count-lines": f"count-{KEY}"})

    answer = upload(client, packed(job), **bearer(token))

    assert answer.status_code == 201, answer.text
    assert KEY[:24] not in answer.text
    job_id = answer.json()["id"]
    for path in (f"/api/bench/jobs/{job_id}", "/api/bench/jobs", f"/bench/jobs/{job_id}", "/bench"):
        shown = client.get(path, headers=bearer(token))
        assert shown.status_code == 200 and KEY[:24] not in shown.text, path
    assert KEY[:24] not in stored_text(db, settings)


def renamed(sealed: SealedJob, folder: Path, name: str) -> bytes:
    """A copy of the job under another name, as `harbor run --job-name` would have made it."""
    job = sealed.copy_to(folder)
    for path in job.rglob("*.json"):
        if path.name != "manifest.json":
            path.write_text(path.read_text().replace('"oracle-k2"', json.dumps(name)))
    moved = job.with_name(name)
    job.rename(moved)
    reseal(moved)
    return packed(moved)


@pytest.mark.parametrize(("name", "hidden"), [("oracle\u202ek2", "\u202e"), ("run\x07", "\x07")])
def test_a_job_named_with_a_control_or_bidi_character_is_refused_and_nothing_stored(
    client: TestClient, *, db: Session, settings: Settings, make_token: TokenFactory,
    sealed: SealedJob, tmp_path: Path, clock: FakeClock, name: str, hidden: str,
) -> None:  # fmt: skip
    answer = upload(client, renamed(sealed, tmp_path, name), **bearer(make_token("alice")))
    assert (answer.status_code, answer.json()["code"]) == (422, "archive-unsafe-path")
    assert f"U+{ord(hidden):04X}" in answer.json()["detail"]
    assert hidden not in answer.json()["detail"]
    assert_nothing_stored(db, settings)


@pytest.mark.parametrize(
    "name",
    ["caf\u00e9-run", "cafe\u0301-run", "run\u200b", "\u0440un", "\uff52\uff55\uff4e", "r" * 200],
)
def test_a_job_named_in_another_script_or_form_is_shown_and_deleted_by_its_name(
    client: TestClient, *, db: Session, make_token: TokenFactory, sealed: SealedJob,
    tmp_path: Path, clock: FakeClock, name: str,
) -> None:  # fmt: skip
    token = make_token("alice")
    answer = upload(client, renamed(sealed, tmp_path, name), **bearer(token))
    assert answer.status_code == 201, answer.text
    job_id = answer.json()["id"]
    shown = answer.json()["name"]
    assert unicodedata.normalize("NFC", shown) == unicodedata.normalize("NFC", name)
    page = client.get(f"/bench/jobs/{job_id}", headers=bearer(token))
    assert html.escape(shown) in page.text

    # A near miss is refused, naming both with hidden characters escaped.
    wrong = client.delete(f"/api/bench/jobs/{job_id}", params={"confirm": name + "x"},
                          headers=bearer(token))  # fmt: skip
    assert wrong.json()["code"] == "delete-confirm-mismatch"
    assert "\u200b" not in wrong.json()["detail"]
    # The name as typed, in either normal form, confirms it.
    typed = unicodedata.normalize("NFD", name)
    deleted = client.delete(f"/api/bench/jobs/{job_id}", params={"confirm": typed},
                            headers=bearer(token))  # fmt: skip
    assert deleted.status_code == 200, deleted.text

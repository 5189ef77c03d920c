"""The three Hbench guides (../shared/spec/hbench-issue-a-run.txt, hbench-upload-a-job.txt,
hbench-withdraw-delete-report.txt) walked as a user would, against the real service in
GitHub mode: Chromium signs in through the fake GitHub, and every Harbor run is the real
`hbench run` of the demo dataset in the bubblewrap sandbox.

The walk issues a run on Run a benchmark and runs the page's own Run it command; issues a
second from a script, stops it part way and resumes it with `hbench jobs resume`; runs a
third on its own. It uploads them in the browser and with the guide page's curl lines as
printed, publishes the issued run and the self-run (which fits two boards of one cell, so
the page asks which), withdraws and deletes the self-run, deletes the published issued run,
uploads its folder again (a counted copy: no board, no Publish, and with its run token
`bench-published-before`), abandons a run, and reports one. Each step asserts the texts and
buttons the guides name, in the words the pages use.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import select

from app.db.models import IssuedRun, IssuedRunStatus, Job, JobStatus
from app.db.session import Database
from app.github.client import GitHubKitClient
from app.github.port import get_github
from app.main import create_app
from app.registry import get_registry
from app.settings import Settings
from app.web.guide_facts import EXAMPLE_SUFFIX
from hbench.demo import demo_spec
from hbench.sandbox import IMPORT_PATH
from registry.loader import DEFAULT_DIR, Registry, load_registry
from tests.browser import WAIT_MS
from tests.fakes.github import FakeGitHub
from tests.hbench.cli.helpers import HBENCH, hbench, write_spec
from tests.hbench.cli.service import loopback_socket, serving_on, url_of

from ..bench.jobs import SealedJob
from ..conftest import NO_REGRADES, github_settings
from ..github.conftest import rsa_keys
from ..publish.conftest import variant
from .browser import Console, screenshot, wait_for_upload
from .test_end_to_end import browser, github

__all__ = ["browser", "github", "rsa_keys"]

pytestmark = [pytest.mark.browser, pytest.mark.harbor]

TWIN = "hbench-demo-twin"
"""A second board of the demo's cell: the same tasks, model and settings as hbench-demo."""
AGAIN = "and a job is published once: run the benchmark again for a new result"
USER_ENV = {
    "PATH": f"{Path(HBENCH).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    "HARBOR_TELEMETRY": "0",
    "COLUMNS": "200",
}
"""A user's shell: `hbench` on the path, as after installing it."""


@pytest.fixture
def twin_registry(tmp_path: Path) -> Registry:
    """The shipped registry copied to a folder, with a second board on the demo's cell."""
    root = tmp_path / "registry"
    shutil.copytree(DEFAULT_DIR, root)
    demo = json.loads((root / "boards" / "hbench-demo.json").read_text())
    twin = {**demo, "slug": TWIN, "title": "hbench demo, no model (a second board)"}
    (root / "boards" / f"{TWIN}.json").write_text(json.dumps(twin, indent=2))
    return load_registry(root)


@dataclass(frozen=True)
class Service:
    url: str
    settings: Settings
    app: FastAPI


@pytest.fixture
def service(tmp_path: Path, github: FakeGitHub, twin_registry: Registry) -> Iterator[Service]:
    """The service in GitHub mode as the fake's App, on its own loopback port, started with
    the registry of two demo boards."""
    sock = loopback_socket()
    url = url_of(sock)
    served = github_settings(
        Settings(state_dir=tmp_path / "state", **NO_REGRADES),
        github_app_id=github.app.id,
        github_private_key=github.app.private_key_pem,
        github_webhook_secret=github.app.webhook_secret,
        github_client_id=github.app.client_id,
        github_client_secret=github.app.client_secret,
        github_api_url=f"{github.url}/api/v3",
        oidc_issuer=github.url,
        public_url=url,
        writer_enabled=False,
    )
    app = create_app(served)
    client = GitHubKitClient(
        base_url=f"{github.url}/api/v3",
        app_id=github.app.id,
        private_key=github.app.private_key_pem,
        client_id=github.app.client_id,
        client_secret=github.app.client_secret,
        transport=httpx.AsyncHTTPTransport(),
        auto_retry=False,
    )
    app.dependency_overrides[get_github] = lambda: client
    app.dependency_overrides[get_registry] = lambda: twin_registry
    with serving_on(app, sock):
        yield Service(url, served, app)


def shell(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A command as printed, pasted into bash."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, **USER_ENV, **env},
    )


def shown(page: Page, selector: str) -> str:
    return page.locator(selector).text_content() or ""


GUIDE_PAGES = ("Put your result on a board", "Self-reported runs and issued runs",
               "Cells and boards", "What a board makes public", "Limits", "Security",
               "Troubleshooting")  # fmt: skip
"""The pages the three guides send a reader to, by the names they give them."""


def guide_commands(page: Page) -> dict[str, str]:
    """The commands Put your result on a board prints, by their ids, after a look at each
    page of the guide the three guides name."""
    for title in GUIDE_PAGES:
        page.get_by_role("link", name="Guide", exact=True).first.click()
        page.locator("ul.cards").get_by_role("link", name=title, exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text(title)
    page.get_by_role("link", name="Guide", exact=True).first.click()
    page.get_by_role("link", name="Put your result on a board").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Put your result on a board")
    ids = ("pack-command", "curl-api-token", "curl-run-token", "resume-command", "publish-command")
    return {name: shown(page, f"#{name}") for name in ids}


def example_job(commands: dict[str, str]) -> str:
    """The example job's name the guide's commands carry."""
    found = re.search(rf"jobs/(\S+-{EXAMPLE_SUFFIX})", commands["pack-command"])
    assert found is not None, commands["pack-command"]
    return found.group(1)


def curl_upload(
    commands: dict[str, str], which: str, folder: Path, job: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """Pack `folder/jobs/<job>` with the guide's pack command and send it with its curl line,
    both as printed but for the example job's name."""
    pack = commands["pack-command"].replace(example_job(commands), job)
    packed = shell(pack, folder)
    assert packed.returncode == 0, packed.stderr
    return shell(commands[which], folder, **env)


def upload_folder(page: Page, job_dir: Path, token: str = "") -> None:
    """Your bench's Upload a job, with the run token pasted when there is one."""
    page.get_by_role("link", name="Your bench").first.click()
    expect(page.get_by_role("heading", level=2, name="Upload a job")).to_be_visible()
    expect(page.locator("section.upload")).to_contain_text("[REDACTED]")
    page.get_by_label("Run token").fill(token)
    page.set_input_files("#folder-input", job_dir)


def open_job(page: Page, name: str) -> None:
    page.get_by_role("link", name="Your bench").first.click()
    page.locator("#jobs").get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(name)


def job_actions(page: Page) -> list[str]:
    return [text.strip() for text in page.locator("ul.actions li").all_inner_texts()]


def stop_part_way(folder: Path, job_name: str, env: dict[str, str]) -> None:
    """`hbench run --config spec.json`, stopped with Ctrl-C once its first trial ended."""
    job = folder / "jobs" / job_name
    process = subprocess.Popen(
        [HBENCH, "run", "--config", "spec.json"],
        cwd=folder,
        env={**os.environ, **USER_ENV, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not any(job.glob("*/result.json")):
            assert process.poll() is None, "hbench run ended before a trial did"
            assert time.monotonic() < deadline, "no trial ended in time"
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be stopped"
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def api(url: str, method: str, path: str, token: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(
        method, f"{url}{path}", headers={"authorization": f"Bearer {token}"}, timeout=60, **kwargs
    )


def test_the_three_guides_walked_as_a_user(
    browser: Browser, github: FakeGitHub, service: Service, demo_registry: Path, tmp_path: Path
) -> None:
    url = service.url
    github.signing_in = github.add_user("octocat")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=url)
    context.set_default_timeout(WAIT_MS)
    page: Page = context.new_page()
    console = Console(page)
    walk = tmp_path / "walk"
    walk.mkdir()
    try:
        # Issue a run first: sign in with GitHub, open Run a benchmark, pick the board and
        # an agent, press Issue the run, copy the run token the page shows once.
        page.goto("/")
        page.get_by_role("link", name="Sign in with GitHub").first.click()
        page.get_by_role("link", name="Run a benchmark").first.click()
        expect(page.locator(".who")).to_contain_text("Signed in as octocat")
        expect(page.get_by_role("heading", level=1)).to_have_text("Run a benchmark")
        page.get_by_label("Board").select_option("hbench-demo")
        page.get_by_label("Where the trials run").select_option(IMPORT_PATH)
        page.get_by_label("Agent", exact=True).fill("oracle")
        expect(page.locator("summary", has_text="More options")).to_be_visible()
        page.get_by_role("button", name="Issue the run").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Your run is issued")
        expect(page.locator(".token")).to_contain_text("this page shows it once")
        token = shown(page, "#run-token")
        assert token.startswith("hpr_")
        entry = shown(page, "#submission")
        assert re.fullmatch(r"oracle-[0-9a-f]{6}", entry), entry
        expect(page.get_by_role("heading", level=2, name="Run it")).to_be_visible()
        expect(page.get_by_role("heading", level=2, name="Upload the job")).to_be_visible()
        expect(page.locator("#upload-title + p")).to_contain_text("within 48 hours")
        run_it = shown(page, "#run-command")
        upload_it = shown(page, "#upload-command")
        issued_job = json.loads(shown(page, "#spec"))["job_name"]
        screenshot(page, "guides-issued")

        # Run the page's Run it command: it makes the run's folder, writes spec.json there
        # and runs `hbench run --config spec.json`.
        ran = shell(run_it, walk)
        assert ran.returncode == 0, ran.stderr
        issued_folder = walk / "runs" / issued_job
        assert (issued_folder / "spec.json").is_file()
        issued_dir = issued_folder / "jobs" / issued_job

        # Upload a job in the browser: paste the run token into Run token, drop the folder.
        upload_folder(page, issued_dir, token)
        wait_for_upload(page)
        issued_id = page.url.split("/bench/jobs/")[1].split("?")[0]
        expect(page.locator("#job-status")).to_have_text("Private")
        expect(page.locator("dl.facts").first).to_contain_text("yes, for hbench-demo")
        page.get_by_role("link", name="Your bench").first.click()
        expect(page.locator(f'#runs tr:has-text("{issued_job}")')).to_contain_text("uploaded")
        page.locator("#jobs").get_by_role("link", name=issued_job, exact=True).click()

        # Publish it: Publish, then Make it public?; an issued run keeps its board.
        page.get_by_role("link", name="Publish", exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Make it public?")
        expect(page.locator("main form")).to_contain_text(
            "It is an issued run: it goes on hbench-demo, under the entry it was issued with."
        )
        page.get_by_role("button", name="Publish").click()
        page.wait_for_url("**?done=published")
        expect(page.locator("#job-status")).to_have_text("Published")
        assert "Publish" not in job_actions(page) and "Withdraw" in job_actions(page)
        screenshot(page, "guides-published-issued")

        # Upload from a script: create an API token in Account settings.
        page.get_by_role("link", name="Account settings").click()
        page.get_by_label("What the token is for").fill("guide walk")
        page.get_by_role("button", name="Create token").click()
        expect(page.locator("#created-token")).to_contain_text("this page shows it once")
        api_token = shown(page, "#new-token")
        assert api_token.startswith("hpg_")
        commands = guide_commands(page)

        # Issue it from a script: POST /api/local-runs; a body naming the entry is refused.
        body = {"arena": "hbench-demo", "declarative": {"agent": "oracle"},
                "environment": IMPORT_PATH, "n_concurrent_trials": 1}  # fmt: skip
        named = api(url, "POST", "/api/local-runs", api_token, json={**body, "name": "mine"})
        assert named.status_code == 422 and named.json()["code"] == "entry-name-generated"
        issued = api(url, "POST", "/api/local-runs", api_token, json=body)
        assert issued.status_code == 201, issued.text
        answer = issued.json()
        assert answer["submission"] == entry  # the same settings join the same entry
        assert answer["token"].startswith("hpr_") and answer["prompt_template"] is None
        listed = api(url, "GET", "/api/local-runs", api_token).json()
        listed_ids = [run["run_id"] for run in listed["runs"]]
        assert listed_ids[0] == answer["run_id"] and len(listed_ids) == 2

        # Run it, stop it part way, and continue it with `hbench jobs resume`.
        script_folder = walk / "script"
        script_folder.mkdir()
        write_spec(script_folder, answer["spec"])
        variables = {v["name"]: v["value"] for v in answer["environment"] if not v["secret"]}
        script_job = answer["job_name"]
        flagged = hbench("run", "--config", "spec.json", "-n", "4", cwd=script_folder)
        assert flagged.returncode == 1 and "(spec-flag-refused)" in flagged.stderr
        stop_part_way(script_folder, script_job, variables)
        stopped = hbench("jobs", "verify", "-p", f"jobs/{script_job}", cwd=script_folder)
        assert stopped.returncode != 0, stopped.stdout
        said = " ".join(stopped.stderr.split())  # unwrapped
        assert "(job-unfinished)" in said and "(job-incomplete)" in said
        assert f"Continue it with `hbench jobs resume -p jobs/{script_job}`" in said
        # Sent as it is, stopped, it is refused with a code and its Troubleshooting entry,
        # and nothing changes: the same run token sends it once it is resumed.
        tarred = shell(f"tar czf job.tgz -C jobs {script_job}", script_folder)
        assert tarred.returncode == 0, tarred.stderr
        early = shell(commands["curl-run-token"], script_folder, HPG_RUN_TOKEN=answer["token"])
        assert early.returncode != 0
        unfinished = json.loads(early.stdout)
        assert unfinished["detail"].endswith(f"({unfinished['code']})")
        assert f"({unfinished['code']})" in said  # one of the problems verify listed
        assert unfinished["help"].endswith(f"/guide/troubleshooting#{unfinished['code']}")
        resume = commands["resume-command"].replace(example_job(commands), script_job)
        resumed = shell(resume, script_folder, **variables)
        assert resumed.returncode == 0, resumed.stderr
        checked = hbench("jobs", "verify", "-p", f"jobs/{script_job}", cwd=script_folder)
        assert checked.returncode == 0, checked.stdout + checked.stderr

        # Upload it with curl and the run token, the guide's line as printed.
        sent = curl_upload(commands, "curl-run-token", script_folder, script_job,
                           HPG_RUN_TOKEN=answer["token"])  # fmt: skip
        assert sent.returncode == 0, sent.stdout + sent.stderr
        script_upload = json.loads(sent.stdout)
        assert script_upload["status"] == "private"
        assert script_upload["issued_run_id"] == answer["run_id"]

        # A job run on its own, uploaded with curl and the API token: it fits both boards.
        own_folder = walk / "own"
        own_folder.mkdir()
        own_job = "own-demo"
        spec_path = write_spec(own_folder, demo_spec(demo_registry, own_job))
        ran = hbench("run", "--config", str(spec_path), cwd=own_folder)
        assert ran.returncode == 0, ran.stderr
        sent = curl_upload(commands, "curl-api-token", own_folder, own_job,
                           HPG_API_TOKEN=api_token)  # fmt: skip
        assert sent.returncode == 0, sent.stdout + sent.stderr
        own_upload = json.loads(sent.stdout)
        assert own_upload["status"] == "private" and own_upload["issued_run_id"] is None
        assert own_upload["boards"]["fits"] == ["hbench-demo", TWIN]

        # If the job fits more than one board, Your bench asks which: choose, press Publish.
        open_job(page, own_job)
        expect(page.locator("dl.facts").first).to_contain_text("no (self-reported)")
        expect(page.locator("dl.facts").first).to_contain_text(f"hbench-demo, {TWIN}")
        page.get_by_role("link", name="Publish", exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Make it public?")
        expect(page.locator("legend")).to_have_text("The job fits several boards: choose one")
        page.get_by_label(TWIN).check()
        page.get_by_role("button", name="Publish").click()
        page.wait_for_url("**?done=published")
        expect(page.locator("#job-status")).to_have_text("Published")

        # Withdraw a score: Withdraw, then Withdraw for good; the page shows Withdrawn.
        page.get_by_role("link", name="Withdraw", exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Withdraw for good?")
        expect(page.locator("main")).to_contain_text(
            "It can't be undone, and a withdrawn job can't be published again. "
            "A run you issued still counts toward your limits."
        )
        page.get_by_role("button", name="Withdraw for good").click()
        page.wait_for_url("**?done=withdrawn")
        expect(page.locator("#job-status")).to_have_text("Withdrawn")
        assert "Publish" not in job_actions(page) and "Withdraw" not in job_actions(page)
        expect(page.locator("#no-publish")).to_contain_text("job-withdrawn")

        # Delete a job: Delete job, type its name, press Delete job.
        page.get_by_role("link", name="Delete job").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Delete job")
        expect(page.locator("main")).to_contain_text("It can't be undone.")
        expect(page.locator("#delete-goes")).to_contain_text(
            "The job's results, trajectories, logs and files"
        )
        page.get_by_label("Type the job's name").fill(own_job)
        page.get_by_role("button", name="Delete job").click()
        page.wait_for_url("**/bench?done=deleted")
        expect(page.locator("#jobs")).not_to_contain_text(own_job)

        # A published job deleted: its page says its score stays on its board.
        open_job(page, issued_job)
        page.get_by_role("link", name="Delete job").click()
        expect(page.locator("#delete-stays")).to_contain_text("Its score, on hbench-demo")
        expect(page.locator("#delete-stays")).to_contain_text("bench-published-before")
        page.get_by_label("Type the job's name").fill(issued_job)
        page.get_by_role("button", name="Delete job").click()
        page.wait_for_url("**/bench?done=deleted-kept")
        expect(page.locator("[role=status]").first).to_contain_text("its score stays on its board")
        screenshot(page, "guides-deleted")

        # The same folder uploaded again is a counted copy: private, on no board, no Publish.
        job_id = json.loads((issued_dir / "result.json").read_text())["id"]
        message = f"hbench job {job_id} was published before, {AGAIN}"
        upload_folder(page, issued_dir)
        wait_for_upload(page)
        copy_id = page.url.split("/bench/jobs/")[1].split("?")[0]
        expect(page.locator("#job-status")).to_have_text("Private")
        expect(page.locator("#counted-before")).to_have_text(
            "none: a copy of a job that counted already"
        )
        expect(page.locator("ul.notes").first).to_contain_text(message)
        expect(page.locator("ul.notes").first).to_contain_text("bench-published-before")
        assert "Publish" not in job_actions(page)
        expect(page.get_by_role("link", name="Publish", exact=True)).to_have_count(0)
        page.get_by_role("link", name="Your bench").first.click()
        expect(page.locator("#jobs")).to_contain_text("none: counted before bench-published-before")
        screenshot(page, "guides-counted-copy")

        # With its run token, in the browser and with curl, it answers bench-published-before.
        upload_folder(page, issued_dir, token)
        expect(page.locator("#upload-refusal")).to_be_visible()
        expect(page.locator("#upload-problems")).to_contain_text(message)
        expect(page.locator("#upload-problems")).to_contain_text("bench-published-before")
        page.locator("#upload-problems").get_by_role("link", name="bench-published-before").click()
        page.wait_for_url("**/guide/troubleshooting#bench-published-before")
        expect(page.locator("[id='bench-published-before']")).to_be_visible()
        refused_page = shell(upload_it, issued_folder, HPG_RUN_TOKEN=token)
        assert refused_page.returncode == 1, refused_page.stdout
        assert f"{message} (bench-published-before)" in " ".join(refused_page.stderr.split())
        refused = curl_upload(commands, "curl-run-token", issued_folder, issued_job,
                              HPG_RUN_TOKEN=token)  # fmt: skip
        assert refused.returncode != 0
        refusal = json.loads(refused.stdout)
        assert refusal["code"] == "bench-published-before", refusal
        assert refusal["detail"] == f"{message} (bench-published-before)"
        assert refusal["help"].endswith("/guide/troubleshooting#bench-published-before")

        # A copy whose job id was changed, dropped as a .tar.gz: its trials give it away.
        renamed = tmp_path / "renamed.tar.gz"
        renamed.write_bytes(variant(SealedJob(issued_dir, answer["spec"]), tmp_path))
        page.get_by_role("link", name="Your bench").first.click()
        page.set_input_files("#archive-input", renamed)
        wait_for_upload(page)
        expect(page.locator("#counted-before")).to_be_visible()
        expect(page.locator("ul.notes").first).to_contain_text(
            re.compile(rf"^a trial of \S+ was published before, {AGAIN} bench-published-before")
        )
        expect(page.get_by_role("link", name="Publish", exact=True)).to_have_count(0)

        # The withdrawn, deleted self-run sent again with curl: counted, on no board, and its
        # publishing (the guide page's command) is refused with bench-published-before.
        sent = curl_upload(commands, "curl-api-token", own_folder, own_job,
                           HPG_API_TOKEN=api_token)  # fmt: skip
        assert sent.returncode == 0, sent.stdout + sent.stderr
        again = json.loads(sent.stdout)
        assert again["counted_before"] is True and again["boards"]["fits"] == []
        assert again["actions"]["publish"]["possible"] is False
        publish_it = commands["publish-command"].replace("<job-id>", again["id"])
        published = shell(publish_it, own_folder, HPG_API_TOKEN=api_token)
        assert published.returncode == 1, published.stdout
        assert "(bench-published-before)" in published.stderr

        # Abandon a run: Abandon beside it on Your bench, then Abandon this run?.
        spare = api(url, "POST", "/api/local-runs", api_token, json=body).json()
        page.get_by_role("link", name="Your bench").first.click()
        row = page.locator(f'#runs tr[data-run="{spare["run_id"]}"]')
        expect(row).to_contain_text("waiting for upload")
        row.get_by_role("link", name="Abandon").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Abandon this run?")
        page.get_by_role("button", name="Abandon this run").click()
        expect(page.locator(f'#runs tr[data-run="{spare["run_id"]}"]')).to_contain_text("abandoned")

        # Or from a script: POST /api/local-runs/<run_id>/abandon.
        other = api(url, "POST", "/api/local-runs", api_token, json=body).json()
        dropped = api(url, "POST", f"/api/local-runs/{other['run_id']}/abandon", api_token)
        assert dropped.status_code == 200, dropped.text

        # Report a run: give the entry and its run number, say what's wrong, Send report.
        page.get_by_role("link", name="Report a submission").first.click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Report a submission")
        expect(page.locator("main").get_by_role("link", name="Security")).to_be_visible()
        page.get_by_label("Entry, as its board shows it").fill(entry)
        page.get_by_label("Run number").fill(issued_id)
        page.get_by_label("What's wrong").fill("Its files were deleted; please take it down.")
        page.get_by_role("button", name="Send report").click()
        expect(page.locator("#report-sent")).to_contain_text("your report is number")
        expect(page.locator("#report-sent")).to_contain_text(
            "the person you reported never sees who you are"
        )
        screenshot(page, "guides-reported")
        assert console.problems == []
    finally:
        context.close()

    database = Database(service.settings.effective_database_url)
    try:
        with database.session() as session:
            original, copy = (
                session.get_one(Job, uuid.UUID(issued_id)),
                session.get_one(Job, uuid.UUID(copy_id)),
            )
            # Deleted, its score left on its board; the copy kept privately, on no board.
            assert original.status is JobStatus.DELETED and original.board == "hbench-demo"
            assert original.published_at is not None and original.withdrawn_at is None
            assert original.entry == entry  # the entry it was issued with
            assert copy.status is JobStatus.PRIVATE and copy.board is None
            # The uploads refused with bench-published-before stored nothing: the original,
            # its copy and the copy under another job id are all there is of it.
            stored = session.scalars(select(Job).where(Job.job_name == issued_job)).all()
            assert len(stored) == 3
            own = session.get_one(Job, uuid.UUID(own_upload["id"]))
            assert own.status is JobStatus.DELETED and own.board == TWIN
            assert own.withdrawn_at is not None
            assert own.entry == entry  # the owner's entry for the agent and its options
            runs = {str(run.id): run.status for run in session.scalars(select(IssuedRun))}
            assert runs[answer["run_id"]] is IssuedRunStatus.UPLOADED
            assert runs[spare["run_id"]] is IssuedRunStatus.ABANDONED
            assert runs[other["run_id"]] is IssuedRunStatus.ABANDONED
    finally:
        database.dispose()

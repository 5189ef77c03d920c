"""The guide's pages (`/guide/…`), held to what they describe: every page answers and its
links lead somewhere, its numbers follow the settings, its rule codes are in the catalogue,
its commands are the ones hbench prints and the CLI takes, and no page says "verified"."""

from __future__ import annotations

import html
import itertools
import re
import shlex
from datetime import timedelta
from pathlib import Path
from typing import Any, get_args

import pytest
import typer
from fastapi.testclient import TestClient
from starlette.routing import Route
from typer.exceptions import TyperException

from app.main import create_app
from app.registry import default_registry
from app.settings import Settings, load_settings
from app.web import guide, guide_facts
from app.web import run as run_page
from hbench import issue
from hbench.cli.main import app as hbench_app
from hbench.cli.output import console
from hbench.cli.runs import print_issued
from hbench.codes import CODE_NAMES
from hbench.errors import HbenchError
from hbench.upload import RUN_TOKEN_HEADER
from registry.datarepo.models import PublishedRun
from registry.evidence import LEVELS
from registry.schema import SourceType

from ..conftest import LOCAL, NO_REGRADES, TokenFactory
from .conftest import ORIGIN, form_token

PAGES = [page.href for page in guide.GUIDE if page.slug != "troubleshooting"]
"""The guide's pages this module serves (Troubleshooting is app/web/troubleshooting.py's)."""
LINK = re.compile(r'href="([^"]+)"')
CODE = re.compile(r'<code class="code">([^<]*)</code>')
LINKED_CODE = re.compile(
    r'<a href="/guide/troubleshooting#([^"]+)"><code class="code">([^<]*)</code>'
)
PRE = re.compile(r'<pre id="([^"]+)"[^>]*>(.*?)</pre>', re.DOTALL)


def commands_on(page: str) -> dict[str, str]:
    """The page's commands by their element's id, as a reader copies them."""
    return {name: html.unescape(text) for name, text in PRE.findall(page)}


def served(client: TestClient, path: str) -> bool:
    return any(isinstance(r, Route) and r.path == path for r in client.app.routes)  # type: ignore[attr-defined]


def test_the_index_lists_every_page_and_each_page_answers(client: TestClient) -> None:
    index = client.get("/guide/")
    assert index.status_code == 200
    links = set(LINK.findall(index.text))
    for page in guide.GUIDE:
        assert page.href in links, page.href
        assert page.title in index.text
    assert client.get("/guide", follow_redirects=False).headers["location"] == "/guide/"
    for path in PAGES:
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        for landmark in ("<header", "<nav", "<main", "<footer", "<h1>"):
            assert landmark in answer.text, (path, landmark)
        assert set(LINK.findall(answer.text)) >= {p.href for p in guide.GUIDE}, path
        assert "script-src 'self'" in answer.headers["content-security-policy"]


def test_the_guide_is_open_to_everyone(remote: TestClient) -> None:
    for path in ["/guide/", *PAGES]:
        answer = remote.get(path)
        assert answer.status_code == 200, (path, answer.text)
        assert "Signed in as" not in answer.text


def test_every_link_on_the_guide_leads_somewhere(client: TestClient) -> None:
    pages = {path: client.get(path).text for path in ["/guide/", *PAGES]}
    targets = {
        html.unescape(link)
        for text in pages.values()
        for link in LINK.findall(text)
        if link.startswith("/") and not link.startswith("/web-static")
    }
    assert targets
    for target in sorted(targets):
        path, _, anchor = target.partition("#")
        if path == guide.TROUBLESHOOTING and not served(client, path):
            continue  # the Troubleshooting page is served by its own module
        if path.startswith("/site/"):
            continue  # the built site, whose first build the writer makes (off here)
        answer = client.get(path)
        assert answer.status_code == 200, (target, answer.status_code)
        if anchor and path.startswith("/guide/"):
            assert f'id="{anchor}"' in answer.text, target


def test_the_app_pages_link_the_guide(client: TestClient) -> None:
    for path in ("/", "/bench", "/run"):
        links = set(LINK.findall(client.get(path).text))
        assert {"/guide/", "/guide/limits", "/guide/security"} <= links, path


def test_the_old_limits_address_leads_to_the_guides_limits(client: TestClient) -> None:
    answer = client.get("/limits", follow_redirects=False)
    assert answer.status_code == 301
    assert answer.headers["location"] == "/guide/limits"
    assert "<h1>Limits</h1>" in client.get("/limits").text


def test_no_page_says_verified(client: TestClient) -> None:
    registry = default_registry()
    # Names are not claims: a benchmark may be called "SWE-bench Verified".
    names = sorted(
        {b.slug for b in registry.boards.values()}
        | {b.title for b in registry.boards.values() if b.title}
        | {b.slug for b in registry.benchmarks.values()}
        | {b.name for b in registry.benchmarks.values()},
        key=len,
        reverse=True,
    )
    for path in ["/guide/", *PAGES]:
        text = client.get(path).text
        for name in names:
            text = text.replace(name, "")
        assert re.search(r"verified", text, re.IGNORECASE) is None, path


def test_every_code_shown_is_in_the_catalogue_and_links_its_entry(client: TestClient) -> None:
    shown: set[str] = set()
    for path in PAGES:
        text = client.get(path).text
        codes = CODE.findall(text)
        linked = LINKED_CODE.findall(text)
        assert set(codes) <= CODE_NAMES, (path, set(codes) - CODE_NAMES)
        assert all(anchor == code for anchor, code in linked), path
        # Every code the guide writes is linked; only the shared refusal box shows others.
        assert len(linked) == len(codes), path
        shown |= set(codes)
    assert {"local-spec-mismatch", "entry-name-generated", "bench-published-before"} <= shown


def test_a_code_missing_from_the_catalogue_fails_the_page() -> None:
    assert 'href="/guide/troubleshooting#job-unfinished"' in guide.rule("job-unfinished")
    with pytest.raises(ValueError, match="no-such-code"):
        guide.rule("no-such-code")


def test_the_limits_and_the_path_to_a_board_follow_the_settings(
    tmp_path: Path, database_url: str
) -> None:
    changed = Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        upload_max_bytes=17 * 1024 * 1024, unpacked_max_bytes=203 * 1024 * 1024,
        run_token_lifetime=timedelta(hours=6), publish_window=timedelta(days=11),
        deleted_files_retention=timedelta(days=3), reports_per_hour=9,
        upload_max_redactions=4321, min_hbench_version="0.4.2", runs_per_ip_per_day=12,
        runs_per_user_per_day=34, **NO_REGRADES,
    )  # fmt: skip
    with TestClient(create_app(changed), **LOCAL) as client:
        limits = client.get("/guide/limits").text
        path = client.get("/guide/put-your-result-on-a-board").text
        issued = client.get("/guide/self-reported-and-issued-runs").text
    for fact in (
        "<dt>Upload, as sent</dt><dd>17 MiB",
        "<dt>Upload, unpacked</dt><dd>203 MiB",
        "<dt>Values redacted in one upload</dt><dd>4,321",
        "<dt>Oldest hbench that may seal a job</dt><dd>0.4.2",
        "<dt>Run token lifetime</dt><dd>6 hours",
        "<dt>Publish window after upload</dt><dd>11 days",
        "<dt>A deleted job's files are kept</dt><dd>3 days",
        "<dt>Reports</dt><dd>9 an hour",
        "34 a day per account, 12 a day per address",
    ):
        assert fact in limits, fact
    for fact in (
        "Install hbench 0.4.2 or later",
        "works for 6 hours",
        "17 MiB as sent and 203 MiB unpacked",
        "Publish within 11 days",
        "leave storage 3 days after",
        "9 reports an hour",
    ):
        assert fact in path, fact
    assert "one accepted upload within 6 hours" in issued
    for default in ("48 hours", "95 MiB", "30 days", "7 days", "512 MiB"):
        assert default not in limits + path + issued, default


def test_the_trusted_workflow_releases_are_the_settings(tmp_path: Path, database_url: str) -> None:
    release = "hbench/hbench/.github/workflows/run-benchmark.yml@v0.3.0"
    trusting = Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        trusted_workflows=(f"{release}={'a' * 40}",), **NO_REGRADES,
    )  # fmt: skip
    with TestClient(create_app(trusting), **LOCAL) as client:
        page = client.get("/guide/put-your-result-on-a-board").text
    assert f"<li><code>uses: {release}</code></li>" in page
    assert "a" * 40 not in page
    assert "lists no trusted release" not in page


def test_the_limits_list_each_boards_caps_from_the_registry(client: TestClient) -> None:
    page = client.get("/guide/limits").text
    assert '<span class="slug">hbench-demo</span>' in page
    assert "Yours, last 24 hours" in page  # the local user is signed in


def test_the_commands_are_the_ones_hbench_prints(client: TestClient) -> None:
    page = client.get("/guide/put-your-result-on-a-board").text
    shown = commands_on(page)
    example = guide_facts.commands(ORIGIN, "local", default_registry())
    job = example.job
    assert shown["upload-printed"] == issue.upload_command(ORIGIN, job)
    assert shown["upload-page"] == run_page.upload_command(ORIGIN, job)
    answer = {
        "run_id": "r1", "board": example.board, "submission": example.entry,
        "expires_at": "2026-12-03T12:00:00Z", "job_name": job,
        "environment": [
            {"name": "HARBOR_TELEMETRY", "value": "0", "secret": False,
             "description": "keeps Harbor's telemetry off"},
        ],
    }  # fmt: skip
    with console.capture() as captured:
        print_issued(answer, Path("runs") / job, ORIGIN)
    printed = [line.strip() for line in captured.get().splitlines()]
    assert shown["run-command"] in printed
    assert shown["upload-printed"] in printed
    assert "lists no trusted release" in page


def test_the_issued_runs_page_shows_the_upload_command_the_guide_shows(
    client: TestClient,
) -> None:
    issued = client.post(
        "/run",
        data={"board": "hbench-demo", "agent": "oracle", "csrf_token": token_of(client)},
        headers={"origin": ORIGIN},
    )
    assert issued.status_code == 200, issued.text
    on_run_page = commands_on(issued.text)["upload-command"]
    job = on_run_page.rsplit("/", 1)[1]
    guide_line = commands_on(client.get("/guide/put-your-result-on-a-board").text)["upload-page"]
    assert guide_line.rsplit("/", 1)[0] == on_run_page.rsplit("/", 1)[0]
    assert job.startswith("hbench-demo-oracle-")
    assert guide_line.rsplit("/", 1)[1].startswith("hbench-demo-oracle-")


def test_every_hbench_command_shown_is_one_the_cli_takes(client: TestClient) -> None:
    page = client.get("/guide/put-your-result-on-a-board").text
    example = vars(guide_facts.commands(ORIGIN, "local", default_registry()))
    assert set(commands_on(page).values()) <= set(example.values())
    assert html.escape(example["abandon"], quote=False) in page
    hbench_lines = [
        part.strip()
        for text in example.values()
        if not text.startswith("curl")
        for part in text.split("&&")
        if "hbench " in part
    ]
    assert len(hbench_lines) == 12
    for line in hbench_lines:
        words = [w for w in shlex.split(line) if "=" not in w or w.startswith("-")]
        assert words[0] == "hbench", line
        parse(words[1:])


def test_the_curl_lines_are_uploads_the_service_takes(
    remote: TestClient, make_token: TokenFactory, sealed_archive: bytes
) -> None:
    shown = commands_on(remote.get("/guide/put-your-result-on-a-board").text)
    token = make_token("alice")
    words = shlex.split(shown["curl-api-token"].replace("\\\n", " "))
    headers = dict(
        value.split(": ", 1) for flag, value in itertools.pairwise(words) if flag == "-H"
    )
    assert words[words.index("--data-binary") + 1] == "@job.tgz"
    url = words[-1]
    assert url == "http://hbench.example/api/bench/uploads"
    headers = {name: value.replace("$HPG_API_TOKEN", token) for name, value in headers.items()}
    answer = remote.post("/api/bench/uploads", content=sealed_archive, headers=headers)
    assert answer.status_code in (200, 201), answer.text
    run_token_words = shlex.split(shown["curl-run-token"].replace("\\\n", " "))
    assert f"{RUN_TOKEN_HEADER}: $HPG_RUN_TOKEN" in run_token_words
    assert "content-type: application/gzip" in run_token_words


def test_the_public_fields_are_every_field_of_a_published_run(client: TestClient) -> None:
    assert set(guide_facts.PUBLIC_FIELDS) == set(PublishedRun.model_fields)
    page = client.get("/guide/what-a-board-makes-public").text
    for name, info in PublishedRun.model_fields.items():
        assert f"<code>{info.alias or name}</code>" in page, name


def test_the_evidence_labels_are_every_level(client: TestClient) -> None:
    assert set(guide_facts.HOW_EARNED) == set(LEVELS)
    assert set(guide_facts.SOURCE_TYPES) == set(get_args(SourceType))
    page = client.get("/guide/self-reported-and-issued-runs").text
    for level in LEVELS:
        assert f'id="level-{level}"' in page, level


def test_the_cell_settings_are_the_ones_placement_compares(client: TestClient) -> None:
    page = client.get("/guide/cells-and-boards").text
    for name in guide_facts.cell_settings():
        assert f"<code>{name}</code>" in page, name
    assert "agent_timeout_multiplier" in guide_facts.cell_settings()


def test_security_shows_the_configured_contact_or_says_there_is_none(
    tmp_path: Path, database_url: str, client: TestClient
) -> None:
    without = client.get("/guide/security").text
    assert 'id="security-contact-missing"' in without and "HBENCH_SECURITY_CONTACT" in without
    assert "mailto:" not in without
    for contact, link in (
        ("security@hbench.example", "mailto:security@hbench.example"),
        ("https://hbench.example/security", "https://hbench.example/security"),
    ):
        settings = Settings(
            state_dir=tmp_path / contact.replace("/", "_"), database_url=database_url,
            writer_enabled=False, security_contact=contact, **NO_REGRADES,
        )  # fmt: skip
        with TestClient(create_app(settings), **LOCAL) as other:
            page = other.get("/guide/security").text
        assert f'<a id="security-contact" href="{link}">{contact}</a>' in page


@pytest.mark.parametrize(
    "contact", ["not an address", "http://hbench.example/security", "javascript:alert(1)"]
)
def test_a_security_contact_that_is_no_address_is_refused(contact: str) -> None:
    with pytest.raises(HbenchError) as refused:
        load_settings(security_contact=contact)
    assert refused.value.code == "settings-invalid"


def parse(args: list[str]) -> None:
    """Parse a command line as `hbench` would, without running it: an unknown command or
    option, or a missing required one, fails."""
    command: Any = typer.main.get_command(hbench_app)
    context = command.make_context("hbench", [], resilient_parsing=True)
    words = list(args)
    while hasattr(command, "resolve_command"):  # a group, loaded as hbench loads it to run
        name, command, words = command.resolve_command(context, words)
        assert command is not None, f"hbench has no command {name!r}"
    command.make_context(command.name or "", words)


@pytest.mark.parametrize(
    "args",
    [["jobs", "upload", "--bogus", "x", "--url", "u", "jobs/a"], ["bench", "publish", "--url", "u"],
     ["no-such-command"]],
)  # fmt: skip
def test_parsing_refuses_what_hbench_would_refuse(args: list[str]) -> None:
    with pytest.raises((AssertionError, TyperException)):
        parse(args)


def token_of(client: TestClient) -> str:
    return form_token(client.get("/run"))

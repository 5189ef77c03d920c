"""Troubleshooting (`/guide/troubleshooting`): one entry per rule code of the catalogue, made
from docs/rule-codes.md, and the entry every refusal links."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient
from markupsafe import escape

from app.web.troubleshooting import rendered, sentence
from hbench.codes import CATALOGUE, CODES, GUIDE_PATH, Area
from hbench.rule_docs import read_rule_docs

ID = re.compile(r'\bid="([^"]+)"')
TAGS = re.compile(r"<[^>]+>")


def text_of(markup: str) -> str:
    """What a reader sees of some HTML: its text, with every run of spaces one space."""
    return " ".join(html.unescape(TAGS.sub(" ", markup)).split())


def test_every_code_has_one_entry_under_its_area(remote: TestClient) -> None:
    # Nobody is signed in: the page is for everyone a refusal reaches.
    page = remote.get(GUIDE_PATH)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    ids = ID.findall(page.text)
    assert sorted(code for code in CODES if ids.count(code) != 1) == []
    assert len(ids) == len(set(ids)), "an anchor is used twice"
    body = page.text
    for area in Area:
        start = body.index(f'<h2 id="{area.anchor}">')
        assert body.find(str(escape(area.title)), start) != -1, area
        following = [body.find(f'<h2 id="{other.anchor}">') for other in Area]
        end = min([at for at in following if at > start], default=len(body))
        for code, _, summary in CATALOGUE[area]:
            at = body.index(f'id="{code}"')
            assert start < at < end, f"{code} is not under {area.title!r}"
            assert str(escape(summary)) in body[at:end], code


def test_each_entry_says_what_the_code_means_and_how_to_fix_it(client: TestClient) -> None:
    page = text_of(client.get(GUIDE_PATH).text)
    for section in read_rule_docs():
        for doc in section.codes:
            # The docs' words, as the page shows them (Markdown's marks gone).
            assert text_of(rendered(doc.meaning)) in page, doc.code
            assert text_of(rendered(sentence(doc.fix))) in page, doc.code
    assert "**Fix:**" not in page
    assert page.count("How to fix it") == len(CODES)


def test_the_page_has_the_pages_own_layout(client: TestClient) -> None:
    page = client.get(GUIDE_PATH)
    for landmark in ("<header", "<nav", "<main", "<footer", "<h1>Troubleshooting</h1>"):
        assert landmark in page.text, landmark
    assert "Signed in as <strong>local</strong>" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert 'href="/guide/"' in page.text


def test_markdown_is_escaped_and_its_links_stay_on_the_page() -> None:
    shown = str(rendered("<script>x</script> see `job-unfinished` and [trust.md](trust.md)."))
    assert "<script>" not in shown and "&lt;script&gt;" in shown
    assert '<a href="#job-unfinished"><code>job-unfinished</code></a>' in shown
    # The service serves no docs/ folder: the link keeps its words and names the file.
    assert "trust.md (<code>docs/trust.md</code>)" in shown and 'href="trust.md"' not in shown
    assert '<a href="https://example.org">' in str(rendered("[x](https://example.org)"))


def test_a_refusal_page_links_each_code_to_its_entry(remote: TestClient) -> None:
    answer = remote.get("/bench")
    assert answer.status_code == 401
    link = f'<a href="{GUIDE_PATH}#auth-required"><code class="code">auth-required</code></a>'
    assert link in answer.text
    page = remote.get(GUIDE_PATH)
    assert 'id="auth-required"' in page.text


def test_an_api_refusals_help_leads_to_its_entry(remote: TestClient) -> None:
    answer = remote.get("/api/me")
    assert answer.status_code == 401
    body = answer.json()
    assert body["help"] == f"{GUIDE_PATH}#{body['code']}"
    path, _, anchor = body["help"].partition("#")
    assert f'id="{anchor}"' in remote.get(path).text

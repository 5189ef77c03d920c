"""HTML is written one way, escaping by construction: `sitebuild.html.html` escapes every
value unless it is `Markup`, and a record's text reaches the run and entry pages escaped;
each page reads a context of its own type."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from registry.datarepo.state import Change, RepoState, publish_run
from sitebuild.build import build_site
from sitebuild.html import NOTHING, Markup, const, html, join, template
from sitebuild.page import Page
from sitebuild.render import render_html
from sitebuild.source import read_data_repo

from .datarepo import DEMO_TASKS, T0, entry, make_run

DEMO = "hbench-demo"
SCRIPT = "<script>alert('x')</script>"


def test_every_value_is_escaped_unless_it_is_markup() -> None:
    made = html('<a href="{href}">{text}</a>{tail}', href='x" onclick="y', text=SCRIPT,
                tail=Markup("<br>"))  # fmt: skip
    assert made == (
        '<a href="x&#34; onclick=&#34;y">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</a><br>'
    )
    assert isinstance(made, Markup)
    # HTML the site made goes in once, not escaped twice.
    assert html("<p>{inner}</p>", inner=made).count("&amp;") == 0
    assert html("{n} of {m}", n=3, m=4.5) == "3 of 4.5"


def test_braces_are_doubled_and_fields_are_plain_names() -> None:
    assert html("{{literal}} {v}", v="&") == "{literal} &amp;"
    with pytest.raises(ValueError, match="plain name"):
        html("{v:.2f}", v=1.0)
    with pytest.raises(ValueError, match="plain name"):
        html("{v!r}", v=1.0)
    with pytest.raises(ValueError, match="plain name"):
        html("{_private}", _private=1)
    with pytest.raises(TypeError):  # every field given, and nothing else
        html("{missing}")
    with pytest.raises(TypeError):
        html("{given}", given=1, extra=2)


def test_a_compiled_template_and_fixed_html_are_the_same_html() -> None:
    row = template("<td>{text}</td>")
    assert row(text="<b>") == html("<td>{text}</td>", text="<b>") == "<td>&lt;b&gt;</td>"
    assert isinstance(row(text="x"), Markup)
    assert const("it's ours") == "it's ours" and isinstance(const("x"), Markup)
    assert html("<p>{x}</p>", x=NOTHING) == "<p></p>"


def test_join_keeps_markup() -> None:
    pieces = [html("<li>{x}</li>", x=x) for x in ("a", "<b>")]
    assert join(pieces, "\n") == "<li>a</li>\n<li>&lt;b&gt;</li>"
    assert isinstance(join(pieces), Markup)


def test_a_records_markup_shows_as_text_on_its_run_and_entry_pages(
    data_repo: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(data_repo, repo)
    owner = entry("mallory", "oracle", note=SCRIPT)
    run = make_run("demo-x", DEMO, owner, {t: [1.0] for t in DEMO_TASKS},
                   T0.replace(month=10, day=25), config={"agent": {"note": SCRIPT}})  # fmt: skip
    before = RepoState(read_data_repo(repo))
    after = publish_run(before, run, Change("c-x", run.published_at))
    for path, text in after.diff(before).items():
        assert text is not None
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    out = tmp_path / "site"
    build_site(repo, out)
    run_page = (out / f"boards/{DEMO}/runs/demo-x.html").read_text()
    entry_page = (out / f"boards/{DEMO}/entries/{owner.name}.html").read_text()
    board_page = (out / f"boards/{DEMO}/index.html").read_text()
    for page in (run_page, entry_page, board_page):
        assert "<script>alert" not in page
        assert "&lt;script&gt;alert(" in page


def test_a_page_reads_a_typed_context_not_a_dict() -> None:
    home = Page(path="index.html", template="home.html", title="Boards", section="boards",
                context={"boards": []})  # fmt: skip
    with pytest.raises(TypeError, match="dataclass"):
        render_html(home)
    run = Page(path="boards/b/runs/r.html", template="run", title="Run", section="boards",
               context={"run": None})  # fmt: skip
    with pytest.raises(TypeError, match="RunContext"):
        render_html(run)

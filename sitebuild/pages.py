"""The site's other pages: the boards index (the home page), the audit log, the limits,
and how to take part."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from pydantic import JsonValue

from hbench.limits import MAX_FILES
from registry.datarepo import layout
from registry.datarepo.models import AuditEvent
from registry.loader import Registry
from registry.placement import MAX_ATTEMPTS
from registry.schema import ISSUED_ATTEMPTS, Board
from sitebuild import page
from sitebuild.boards import board_json
from sitebuild.config import SiteConfig
from sitebuild.format import iso, when
from sitebuild.html import Markup, html, join
from sitebuild.page import Page
from sitebuild.source import BoardSource, SiteData

ACTION = "hbench/hbench@v1"
"""The all-in-one Action (issue, run, upload) as a workflow names it."""

SERVICE_PLACEHOLDER = "https://<service>"
"""Shown in commands when the site was built without the service's address."""

LATEST_EVENTS = 50
"""Audit events on the audit log's first page; each month has a page with all of them."""


@dataclass(frozen=True)
class HomeContext:
    """What `home.html` shows: every board, those with rows first."""

    boards: Sequence[BoardSource]
    registry: Registry


@dataclass(frozen=True)
class AuditContext:
    """What `audit.html` shows: each month's counts, the events listed (the newest, or a
    month's) with their table's rows, and the month (None for the newest)."""

    months: Sequence[JsonValue]
    events: Sequence[AuditEvent]
    month: str | None
    event_rows: Markup


@dataclass(frozen=True)
class RegistryContext:
    """What `registry.html` shows: each benchmark's slug and name."""

    benchmarks: Sequence[tuple[str, str]]


@dataclass(frozen=True)
class LimitsContext:
    """What `limits.html` shows: the registry's boards with their issuing limits, the
    general caps, and the site's boards by slug."""

    boards: Sequence[Board]
    general: Mapping[str, JsonValue]
    sources: Mapping[str, BoardSource]


@dataclass(frozen=True)
class TakePartContext:
    """What `take_part.html` shows: the service's address, the Action and the CLI's
    commands."""

    service: str
    action: str
    cli: Sequence[JsonValue]


def other_pages(site: SiteData, config: SiteConfig) -> Iterator[Page]:
    yield home_page(site)
    yield from audit_pages(site)
    yield limits_page(site, config)
    yield take_part_page(config)


def home_page(site: SiteData) -> Page:
    """Every board, named or opened by a job, with its leader."""
    boards = sorted(site.boards.values(), key=lambda b: (b.rows is None, b.title.lower()))
    return Page(
        path=page.home(),
        template="home.html",
        title="Boards",
        section="boards",
        context=HomeContext(boards, site.registry),
        data={"boards": [board_json(b) for b in boards]},
    )


def audit_pages(site: SiteData) -> Iterator[Page]:
    """The audit log: the newest events and each month's, with links to boards and runs."""
    newest = sorted(site.audit, key=lambda e: (e.time, e.change), reverse=True)
    months: dict[str, list[AuditEvent]] = {}
    for event in newest:
        months.setdefault(f"{event.time:%Y-%m}", []).append(event)
    summary: list[JsonValue] = [
        {"month": month, "events": len(events), "actions": dict(Counter(e.action for e in events))}
        for month, events in months.items()
    ]
    links = _audit_links(site, newest)
    latest = newest[:LATEST_EVENTS]
    yield Page(
        path=page.audit(),
        template="audit.html",
        title="Audit log",
        section="audit",
        context=AuditContext(summary, latest, None, _event_rows(latest, links)),
        data={"months": summary, "latest": _events_json(latest)},
    )
    for month, events in months.items():
        yield Page(
            path=page.audit_month(month),
            template="audit.html",
            title=f"Audit log, {month}",
            section="audit",
            context=AuditContext(summary, events, month, _event_rows(events, links)),
            data={"month": month, "events": _events_json(events)},
        )


def registry_page(site: SiteData) -> Page:
    """The static registry's folder, for people: what it holds and who reads it."""
    benchmarks = sorted((b.slug, b.name) for b in site.registry.benchmarks.values())
    return Page(
        path=f"{page.REGISTRY_DIR}/index.html",
        template="registry.html",
        title="The registry, as data",
        section="benchmarks",
        context=RegistryContext(benchmarks),
    )


def limits_page(site: SiteData, config: SiteConfig) -> Page:
    """What one owner may be issued per board, and the caps on every upload."""
    boards = sorted(site.registry.boards.values(), key=lambda b: b.slug)
    general: dict[str, JsonValue] = {
        "uploadMaxBytes": config.upload_max_bytes,
        "unpackedMaxBytes": config.unpacked_max_bytes,
        "maxFiles": MAX_FILES,
        "runTokenHours": _hours(config.run_token_lifetime),
        "publishWindowDays": config.publish_window.days,
        "uploadAttempts": [1, MAX_ATTEMPTS],
        "issuedAttempts": list(ISSUED_ATTEMPTS),
    }
    return Page(
        path=page.limits(),
        template="limits.html",
        title="Limits",
        section="limits",
        context=LimitsContext(boards, general, site.boards),
        data={
            "general": general,
            "boards": [
                {"slug": b.slug, "attempts": list(b.attempts), **b.limits.to_json_dict()}
                for b in boards
            ],
        },
    )


def take_part_page(config: SiteConfig) -> Page:
    """How to put a run on a board: with the Action, or with the CLI."""
    service = (config.service_url or SERVICE_PLACEHOLDER).rstrip("/")
    cli: list[JsonValue] = [
        "hbench run --config spec.json",
        "hbench jobs verify -p jobs/<job-name>",
        f"hbench jobs upload --url {service}/api/bench/uploads "
        "--token-env HPG_API_TOKEN jobs/<job-name>",
    ]
    return Page(
        path=page.take_part(),
        template="take_part.html",
        title="Take part",
        section="take-part",
        context=TakePartContext(service, ACTION, cli),
        data={"serviceUrl": config.service_url, "action": ACTION, "cli": cli},
    )


def _audit_links(site: SiteData, events: Sequence[AuditEvent]) -> dict[str, str]:
    """Site paths of the boards and runs the events name, where those pages exist."""
    links = {}
    for event in events:
        if event.board is None:  # a pushed run's
            if event.run and layout.pushed_run_file(event.run) in site.files:
                links[f"/{event.run}"] = page.pushed_run(event.run)
            continue
        if event.board in site.boards:
            links[event.board] = page.board(event.board)
        if event.run and layout.run_file(event.board, event.run) in site.files:
            links[f"{event.board}/{event.run}"] = page.run(event.board, event.run)
    return links


def _event_rows(events: Sequence[AuditEvent], links: dict[str, str]) -> Markup:
    """The audit table's rows, linking boards and runs (the audit pages sit one folder
    below the root).

    Written here rather than in the template: a busy month has thousands of events, and
    the page is rendered again after every change.
    """
    boards: dict[str, Markup] = {}  # a few hundred boards among thousands of events
    rows = []
    for e in events:
        slug = e.board or ""
        board = boards.get(slug)
        if board is None:
            board = boards[slug] = (
                _linked(slug, links.get(slug)) if slug else html("{text}", text="pushed run")
            )
        run = _linked(e.run, links.get(f"{slug}/{e.run}")) if e.run else ""
        stamp = iso(e.time)
        rows.append(
            html(
                '<tr><td data-sort="{stamp}"><time datetime="{stamp}">{when}</time></td>'
                "<td>{action}</td><td>{board}</td><td>{run}</td>"
                "<td>{reason}</td><td>{note}</td></tr>",
                stamp=stamp,
                when=when(e.time),
                action=e.action.replace("_", " "),
                board=board,
                run=run,
                reason=e.reason or "",
                note=e.note or "",
            )
        )
    return join(rows, "\n")


def _linked(text: str, target: str | None) -> Markup:
    if target is None:
        return html("{text}", text=text)
    return html('<a href="../{target}">{text}</a>', target=target, text=text)


def _events_json(events: Sequence[AuditEvent]) -> list[JsonValue]:
    return [e.to_json_dict() for e in events]


def _hours(span: timedelta) -> float:
    return span.total_seconds() / 3600

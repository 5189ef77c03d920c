"""Checking a data repository's boards without trusting the service: `hbench audit`.

Everything a board shows is recomputed from the runs a checkout holds, with the functions
the data-repo writer and the site builder use (`registry.datarepo.boards.recompute` for the
rows, sitebuild for the pages, the reproduced panels and the leaderboard), and compared
with what the checkout holds: each board's `rows.json`, and the site the builder makes of
the checkout (and a built site beside it, when there is one). Each run's record is checked
on its own too (`sitebuild.audit_runs`). Every difference is reported, each with its rule
code, never only the first.

`audit_files` (`sitebuild.audit_checkout`) is pure over the checkout's files;
`audit_data_repo` reads a checkout, builds the two sites into a temporary folder (the
site as the checkout makes it, and the site as its runs make it, with every `rows.json`
recomputed) and compares them (`sitebuild.audit_sites`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from hbench.errors import HbenchError
from sitebuild.audit_checkout import audit_files
from sitebuild.audit_diff import Difference
from sitebuild.audit_signatures import SignaturePolicy
from sitebuild.audit_sites import compare_sites, read_site, recomputed_files
from sitebuild.build import Builder
from sitebuild.source import read_data_repo

__all__ = ["AuditReport", "SignaturePolicy", "audit_data_repo"]

SITE_FOLDER = "_site"
"""Where the Pages workflow builds the site in its checkout: audited when it is there."""
BUILT = "(built from the checkout)"


@dataclass(frozen=True)
class AuditReport:
    """What an audit checked and every difference it found."""

    boards: int
    runs: int
    entries: int
    sites: tuple[str, ...]
    differences: tuple[Difference, ...] = field(default=())

    @property
    def agrees(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "agrees": self.agrees,
            "boards": self.boards,
            "runs": self.runs,
            "entries": self.entries,
            "sites": list(self.sites),
            "differences": [d.to_json() for d in self.differences],
        }


def audit_data_repo(
    root: Path,
    *,
    site: Path | None = None,
    workers: int = 1,
    scratch: Path | None = None,
    signing: SignaturePolicy = SignaturePolicy(),  # noqa: B008 - a frozen dataclass
) -> AuditReport:
    """Audit the checkout at `root`: its rows, its runs, their signatures (held to
    `signing`) and the sites built from it, and `site` (or the checkout's `_site/`, when
    it holds one) as a built site to hold to them."""
    if site is not None and not (site / "index.json").is_file():
        message = f"{site} is not a built site: it has no index.json"
        raise HbenchError("audit-file-invalid", message, path=str(site))
    files = read_data_repo(root)
    found = audit_files(files, signing)
    differences = list(found.differences)
    held = site if site is not None else root / SITE_FOLDER
    sites = [BUILT]
    # Where every rows.json is the writer's text, the checkout's site is built from the
    # same files as the site its runs give: one build is both.
    same = all(files.get(path) == text for path, text in found.rows.items())
    with tempfile.TemporaryDirectory(prefix="hbench-audit-", dir=scratch) as tmp:
        built, expected = Path(tmp) / "built", Path(tmp) / "expected"
        try:
            Builder(workers=workers, files=recomputed_files(found.rows)).build(
                root, expected, full=True
            )
            if not same:
                Builder(workers=workers).build(root, built, full=True)
        except HbenchError as error:
            differences += [
                Difference(
                    "audit-file-invalid", p.path or str(root), "", None, None, note=p.message
                )
                for p in error.problems
            ]
        else:
            others = [] if same else [(BUILT, built)]
            if site is not None or (held / "index.json").is_file():
                sites.append(str(held))
                others.append((str(held), held))
            recomputed = read_site(expected) if others else {}
            for label, folder in others:
                differences += compare_sites(read_site(folder), recomputed, label)
    return AuditReport(
        found.boards, found.runs, found.entries, tuple(sites), tuple(_unique(differences))
    )


def _unique(differences: Sequence[Difference]) -> Iterator[Difference]:
    seen: set[tuple[str, str, str, str | None]] = set()
    for d in differences:
        key = (d.code, d.path, d.field, d.item)
        if key not in seen:
            seen.add(key)
            yield d

"""Built sites compared: every field of a site's JSON held to the site its runs give,
and the data files the site builder builds that site from (each board's `rows.json` as
the runs give it, `recomputed_files`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from sitebuild.audit_checkout import file_invalid
from sitebuild.audit_diff import ABSENT, Difference, field_name, json_differences
from sitebuild.source import DataFiles

NOT_DATA = frozenset({".build-state.json", "take-part/index.json", "limits/index.json"})
"""A built site's JSON that is not from the data repository: the service's settings."""


def compare_sites(
    held: Mapping[str, bytes], expected: Mapping[str, bytes], label: str
) -> Iterator[Difference]:
    """Every field of a built site's JSON (its boards, entries, runs, the boards index, the
    benchmarks' and models' reproduced panels, the leaderboard, …) that differs from the
    site its runs give."""
    for path in sorted(set(held) | set(expected)):
        if path in NOT_DATA or held.get(path) == expected.get(path):
            continue
        where = f"{label}/{path}"
        board, item = _site_place(path)
        if path not in held or path not in expected:
            present = path in held
            yield Difference(
                _site_code(path, ""), where, "", "page" if present else ABSENT,
                ABSENT if present else "page", board=board, item=item,
                note="the site has a page its runs don't give" if present
                else "the site lacks a page its runs give",
            )  # fmt: skip
            continue
        try:
            have, want = json.loads(held[path]), json.loads(expected[path])
        except ValueError as error:
            yield file_invalid(where, board, f"not JSON ({error})")
            continue
        for steps, a, b in json_differences(have, want):
            named, rest = item, steps
            if board and item is None and len(steps) > 1 and steps[0] == "rows":
                named, rest = steps[1].strip("[]"), steps[2:]
            name = field_name(rest)
            yield Difference(_site_code(path, name), where, name, a, b, board=board, item=named)


def read_site(folder: Path) -> dict[str, bytes]:
    """A built site's JSON files, relative path to bytes."""
    found: dict[str, bytes] = {}
    for here, _dirs, names in os.walk(folder):
        rel = Path(here).relative_to(folder).as_posix()
        for name in names:
            if name.endswith(".json"):
                path = name if rel == "." else f"{rel}/{name}"
                with open(f"{here}/{name}", "rb") as handle:  # noqa: PTH123 - many files
                    found[path] = handle.read()
    return found


def recomputed_files(rows: Mapping[str, str | None]) -> type[DataFiles]:
    """A `DataFiles` whose boards' `rows.json` are the ones `rows` gives (None: no file),
    for the site builder to build the site the runs make."""
    encoded = {path: text.encode() for path, text in rows.items() if text is not None}
    absent = frozenset(path for path, text in rows.items() if text is None)

    class RecomputedFiles(DataFiles):
        replaced: ClassVar[Mapping[str, bytes]] = encoded

        def __init__(self, root: Path, paths: Sequence[str] | Iterator[str]) -> None:
            listed = {p for p in paths if p not in absent} | set(encoded)
            super().__init__(root, sorted(listed))

        def raw(self, path: str) -> bytes:
            data = self.replaced.get(path)
            return data if data is not None else super().raw(path)

    return RecomputedFiles


def _site_place(path: str) -> tuple[str | None, str | None]:
    """The board and the entry, run, benchmark or model a site's file is the page of."""
    parts = path.split("/")
    if parts[0] == "boards" and len(parts) >= 3:
        item = parts[3].removesuffix(".json") if len(parts) == 4 else None
        return parts[1], item
    if parts[0] in {"benchmarks", "models", "runs"} and len(parts) == 3:
        return None, f"{parts[0]} {parts[1]}"
    return None, None


def _site_code(path: str, name: str) -> str:
    if path.split("/", 1)[0] in {"benchmarks", "models", "leaderboard"}:
        return "audit-panel-differs"
    if "/runs/" in path and name == "manifestDigest":
        return "audit-digest-differs"
    return "audit-site-differs"

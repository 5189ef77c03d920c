"""Searching the static registry's index, as `hbench registry search` does."""

from __future__ import annotations

import re

from registry.export import Index, IndexEntry

RUNNABLE = ("native", "adapter")
"""The Harbor statuses that run end to end."""


def search(
    index: Index,
    query: str | None = None,
    *,
    axis: str | None = None,
    harbor_only: bool = False,
    limit: int | None = None,
) -> list[IndexEntry]:
    """Benchmarks where every word of `query` starts a word of the slug, name, description,
    axes or dataset (so `swe` finds SWE-bench, not "answer")."""
    words = _words(query or "")
    found = []
    for entry in index.benchmarks:
        if harbor_only and entry.harbor.status not in RUNNABLE:
            continue
        if axis is not None and axis.lower() not in entry.axes:
            continue
        text = " ".join(
            [entry.slug, entry.name, entry.description, *entry.axes, entry.harbor.dataset or ""]
        )
        tokens = _words(text)
        if all(any(token.startswith(word) for token in tokens) for word in words):
            found.append(entry)
    return found[:limit] if limit is not None else found


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+)*", text.lower())

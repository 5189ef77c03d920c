"""The one JSON formatting of every file the registry package writes: sorted keys, two-space
indent, UTF-8, a final newline. Stable output keeps diffs readable and git small."""

from __future__ import annotations

import json
from typing import Any


def dumps(data: Any) -> str:
    """`data` as file text in the canonical formatting."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def dumps_table(data: dict[str, Any], key: str) -> str:
    """`data` with one top-level key per line and each item of the list `data[key]` on a
    line of its own, compact. Used for derived tables (board rows): a diff shows which
    rows changed, and the compact lines take the C encoder's fast path."""
    lines = []
    for name in sorted(data):
        if name == key:
            items = ",\n".join(f"    {canonical(item)}" for item in data[name])
            body = f"[\n{items}\n  ]" if items else "[]"
        else:
            body = canonical(data[name])
        lines.append(f"  {json.dumps(name)}: {body}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def canonical(data: Any) -> str:
    """`data` as compact canonical JSON, the input of every digest."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

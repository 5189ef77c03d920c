"""What `hbench audit` reports, and the comparison of two JSON values it is made from.

A `Difference` names where a value was found (the file, the board, the entry or run) and
the field, with the value the checkout holds beside the one recomputed from its runs.
`json_differences` walks two JSON values and yields every field where they differ: lists
of records are matched by their key (`entry`, `id`, `slug`, …), not by position, so one
row more or less is one difference, and a change of order is said as one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from hbench.errors import Problem

ABSENT = "(absent)"
"""A value one side does not have."""

KEYS: tuple[tuple[str, ...], ...] = (
    ("entry",),
    ("id",),
    ("slug",),
    ("benchmarkSlug", "modelSlug", "harness"),
    ("benchmark", "model"),
    ("change",),
)
"""The fields that name a record in a list, tried in order: the first all items have."""


@dataclass(frozen=True)
class Difference:
    """One thing the checkout shows otherwise than its runs say, with its rule code."""

    code: str
    path: str  # the file that holds the value
    field: str  # where in it, such as `score` or `runs[demo-1].score`
    held: JsonValue  # what the file holds
    recomputed: JsonValue  # what the runs give
    board: str | None = None
    item: str | None = None  # the entry, run, benchmark or model
    note: str = ""  # what the check found, when it is not a value against another

    def message(self) -> str:
        where = " ".join(
            part
            for part in (
                f"board {self.board}" if self.board else "",
                self.item or "",
                self.field,
            )
            if part
        )
        if self.note:
            return f"{where}: {self.note}"
        return f"{where}: holds {_show(self.held)}, its runs give {_show(self.recomputed)}"

    def problem(self) -> Problem:
        return Problem(self.code, self.message(), self.path)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "code": self.code,
            "path": self.path,
            "board": self.board,
            "item": self.item,
            "field": self.field,
            "held": self.held,
            "recomputed": self.recomputed,
            "message": self.message(),
        }


def json_differences(
    held: JsonValue, recomputed: JsonValue, where: Sequence[str] = ()
) -> Iterator[tuple[list[str], JsonValue, JsonValue]]:
    """Every place where two JSON values differ: its path, and each side's value."""
    if isinstance(held, dict) and isinstance(recomputed, dict):
        for key in sorted(set(held) | set(recomputed)):
            yield from json_differences(
                held.get(key, ABSENT), recomputed.get(key, ABSENT), [*where, key]
            )
        return
    if isinstance(held, list) and isinstance(recomputed, list):
        names = list_key(held + recomputed) if held or recomputed else None
        if names is not None:
            yield from _keyed(held, recomputed, names, where)
            return
        if len(held) == len(recomputed):
            for n, (a, b) in enumerate(zip(held, recomputed, strict=True)):
                yield from json_differences(a, b, [*where, f"[{n}]"])
            return
    # 1 and 1.0 are the same number in JSON; True and 1 are not the same value.
    same_number = _number(held) and _number(recomputed) and held == recomputed
    if (held != recomputed or type(held) is not type(recomputed)) and not same_number:
        yield list(where), held, recomputed


def list_key(items: Sequence[JsonValue]) -> tuple[str, ...] | None:
    """The fields that name each record of the list, or None when they don't all have one."""
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    for key in KEYS:
        names = [record_name(item, key) for item in items]  # type: ignore[arg-type]
        if all(names) and len(set(names)) * 2 >= len(names):
            return key
    return None


def record_name(item: dict[str, JsonValue], key: tuple[str, ...]) -> str:
    values = [item.get(part) for part in key]
    return "/".join(str(v) for v in values) if all(isinstance(v, str) for v in values) else ""


def _keyed(
    held: list[JsonValue], recomputed: list[JsonValue], key: tuple[str, ...], where: Sequence[str]
) -> Iterator[tuple[list[str], JsonValue, JsonValue]]:
    def named(items: list[JsonValue]) -> dict[str, JsonValue]:
        return {record_name(i, key): i for i in items if isinstance(i, dict)}

    mine, theirs = named(held), named(recomputed)
    for name in sorted(set(mine) | set(theirs)):
        yield from json_differences(
            mine.get(name, ABSENT), theirs.get(name, ABSENT), [*where, f"[{name}]"]
        )
    order_held = [n for n in mine if n in theirs]
    order_recomputed = [n for n in theirs if n in mine]
    if order_held != order_recomputed:
        yield [*where, "order"], order_held, order_recomputed  # type: ignore[misc]


def field_name(path: Sequence[str]) -> str:
    """`["rows", "[a]", "score"]` as `rows[a].score`."""
    text = ""
    for part in path:
        text += part if part.startswith("[") or not text else f".{part}"
    return text or "(the whole value)"


def _number(value: JsonValue) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _show(value: JsonValue) -> str:
    if value == ABSENT:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."

"""The largest JSON text a body model accepts, computed from its own limits.

Every string counts at its `maxLength` in the longest form JSON allows a character
(`\\ud83d\\ude00`, twelve bytes for one character past the BMP); every list at its
`maxItems`; every integer at the digits of its bound; every other number at the 24
characters of a double's shortest round-trip form; every optional field present, once,
under the longer of its two names where the model takes both; each member on a line of
its own, indented two spaces a level, as `json.dumps(indent=2)` would write it. A model
with a field that has no such limit can't be bounded, and is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

CHAR_BYTES = 12
"""The most bytes one character takes in JSON: a surrogate pair of `\\uXXXX` escapes."""
NUMBER_CHARS = 24
"""The longest shortest round-trip form of a double, such as `-2.2250738585072014e-308`."""
INDENT = 2

Schema = Mapping[str, Any]


class UnboundedError(ValueError):
    """A schema with a field whose JSON text has no upper bound."""


def largest_json(model: type[BaseModel]) -> int:
    """The most bytes a body `model` validates can take as JSON (see the module's rules)."""
    # A model that populates by name takes either spelling of each field (never both).
    sizes = []
    for by_alias in (True, False):
        schema = model.model_json_schema(by_alias=by_alias, mode="validation")
        sizes.append(_largest(schema, schema.get("$defs", {}), 0, model.__name__))
    return max(sizes)


def _largest(schema: Schema, defs: Schema, depth: int, where: str) -> int:  # noqa: PLR0911, PLR0912  # one case a JSON Schema type
    if "$ref" in schema:
        return _largest(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth, where)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return max(_largest(option, defs, depth, where) for option in schema[key])
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        return _largest_object(schema, defs, depth, where)
    if kind == "array":
        return _largest_array(schema, defs, depth, where)
    if kind == "string":
        if "maxLength" not in schema:
            raise UnboundedError(f"{where} is a string with no maxLength")
        return 2 + CHAR_BYTES * int(schema["maxLength"])
    if kind == "integer":
        if "minimum" not in schema or "maximum" not in schema:
            raise UnboundedError(f"{where} is an integer with no minimum or maximum")
        return max(len(str(int(schema[bound]))) for bound in ("minimum", "maximum"))
    if kind == "number":
        return NUMBER_CHARS
    if kind == "boolean":
        return len("false")
    if kind == "null":
        return len("null")
    raise UnboundedError(f"{where} has no type whose size is known ({dict(schema)})")


def _largest_object(schema: Schema, defs: Schema, depth: int, where: str) -> int:
    if schema.get("additionalProperties", False) is not False:
        raise UnboundedError(f"{where} takes properties it does not name")
    members = schema.get("properties", {})
    # `{` newline, then each member: indent, "key": value, comma, newline; indent `}`.
    size = 2 + 1 + INDENT * depth
    for key, value in members.items():
        line = INDENT * (depth + 1) + len(json.dumps(key)) + len(": ") + 2
        size += line + _largest(value, defs, depth + 1, f"{where}.{key}")
    return size


def _largest_array(schema: Schema, defs: Schema, depth: int, where: str) -> int:
    if "maxItems" not in schema:
        raise UnboundedError(f"{where} is a list with no maxItems")
    item = _largest(schema.get("items", {}), defs, depth + 1, f"{where}[]")
    return 2 + 1 + INDENT * depth + int(schema["maxItems"]) * (INDENT * (depth + 1) + item + 2)

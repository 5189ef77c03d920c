"""Does a job's `config.json` equal the spec its run was issued with? Every field that differs.

Both sides are read as Harbor reads them (`hbench.jobs.config.JobConfig`), with Harbor's
defaults put back: Harbor writes `config.json` without default values, so an absent key
equals its default, and `n_attempts: 1` in the spec equals no `n_attempts` in the job.
Keys Harbor does not know are ignored on both sides, as Harbor ignores them. Only
`jobs_dir` and `retry.max_retries` may differ: they are the two flags `hbench run` takes
besides the spec (../shared/spec/hbench-issue-a-run.txt).

The service stores an issued spec with its key-like values replaced by `[REDACTED]`, so
no key an agent option carries stays in its database (`app.runs.service.issue_run`), and
keeps the digest of the spec as issued. A stored spec is compared as issued: each value
redaction touched is taken from the job's config, and the spec so restored must hash to
that digest, which only the values issued do (`spec_differences`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.uploads.redact import REDACTED, redact_text
from hbench.digest import spec_digest
from hbench.jobs.config import JobConfig

MAY_DIFFER = frozenset({"jobs_dir", "retry.max_retries"})
"""Fields a run may set on its own: where the job is written, and how often crashes rerun."""

ABSENT: Any = object()
"""A key one side has and the other lacks (inside a free-form mapping such as `kwargs`)."""

SHOWN_CHARS = 60
"""A value longer than this is cut in messages: a prompt passage can run to pages."""


@dataclass(frozen=True)
class Difference:
    """One field on which the job's config and the issued spec disagree."""

    field: str
    """Dotted, with list indexes: `agents[0].kwargs.temperature`."""
    issued: Any
    ran: Any
    redacted: bool = False
    """The issued value is one the service keeps redacted: neither side may be shown."""

    def describe(self) -> str:
        if self.redacted:
            return (
                f"{self.field} is not the key-like value the run was issued with (the "
                "service keeps that value redacted, so neither is shown)"
            )
        return f"{self.field} is {shown(self.ran)} in the job, {shown(self.issued)} in the spec"


def spec_differences(
    spec: Mapping[str, Any], config: JobConfig, *, digest: str | None = None
) -> list[Difference]:
    """Every field of `config` that differs from `spec`, in field order; empty when equal.

    With `digest`, the digest of the spec as issued, a spec stored redacted is compared as
    issued: its redacted values are taken from the job (`restored`), and when the whole
    then fails to hash to `digest` while every other field agrees, a redacted value is what
    differs, and each counts as a difference that shows neither side."""
    hidden = redacted_paths(spec)
    if digest is None or not hidden:
        return _differences(spec, config)
    candidate = restored(spec, config)
    if candidate is None:
        return _differences(spec, config)
    differences = _differences(candidate, config)
    if differences or spec_digest(candidate) == digest:
        return differences
    return [Difference(field, REDACTED, REDACTED, redacted=True) for field in hidden]


def _differences(spec: Mapping[str, Any], config: JobConfig) -> list[Difference]:
    try:
        issued = JobConfig.model_validate(dict(spec))
    except ValidationError as error:
        # The service wrote the spec itself, so this is a bug in issuing, not the upload.
        raise ValueError(f"the issued spec is not a Harbor job config: {error}") from None
    differences: list[Difference] = []
    _compare(plain(issued), plain(config), "", differences)
    return [d for d in differences if d.field not in MAY_DIFFER]


def plain(config: JobConfig) -> dict[str, Any]:
    """The config as plain values; sets become sorted lists, so equal sets compare equal."""
    values: dict[str, Any] = _sets_sorted(config.model_dump(mode="python"))
    return values


def _compare(issued: Any, ran: Any, field: str, out: list[Difference]) -> None:
    """Descend into mappings, and lists of one length; anything else differs as a whole, so
    a second agent is one difference (`agents`), not one per field of it."""
    if isinstance(issued, dict) and isinstance(ran, dict):
        for key in sorted(issued.keys() | ran.keys(), key=str):
            where = f"{field}.{key}" if field else str(key)
            _compare(issued.get(key, ABSENT), ran.get(key, ABSENT), where, out)
    elif isinstance(issued, list) and isinstance(ran, list) and len(issued) == len(ran):
        for index, (left, right) in enumerate(zip(issued, ran, strict=True)):
            _compare(left, right, f"{field}[{index}]", out)
    elif issued != ran:
        out.append(Difference(field, issued, ran))


def redacted_paths(spec: Any, field: str = "") -> list[str]:
    """The fields of a stored spec whose value redaction replaced, in order."""
    if isinstance(spec, str):
        return [field] if REDACTED in spec else []
    if isinstance(spec, Mapping):
        return [
            path
            for key, value in spec.items()
            for path in redacted_paths(value, f"{field}.{key}" if field else str(key))
        ]
    if isinstance(spec, list):
        return [p for i, value in enumerate(spec) for p in redacted_paths(value, f"{field}[{i}]")]
    return []


def restored(spec: Mapping[str, Any], config: JobConfig) -> dict[str, Any] | None:
    """A stored spec with each string redaction touched replaced by the job's value at the
    same place; None when the job has no string there."""
    value = _restore(dict(spec), plain(config))
    return None if value is ABSENT else dict(value)


def _restore(stored: Any, ran: Any) -> Any:
    if isinstance(stored, str) and REDACTED in stored:
        return ran if isinstance(ran, str) else ABSENT
    if isinstance(stored, dict):
        mapping = ran if isinstance(ran, dict) else {}
        items = {key: _restore(value, mapping.get(key, ABSENT)) for key, value in stored.items()}
        return ABSENT if any(item is ABSENT for item in items.values()) else items
    if isinstance(stored, list):
        sequence = ran if isinstance(ran, list) else []
        parts = [
            _restore(value, sequence[i] if i < len(sequence) else ABSENT)
            for i, value in enumerate(stored)
        ]
        return ABSENT if any(part is ABSENT for part in parts) else parts
    return stored


def shown(value: Any) -> str:
    """A value for a message: redacted before it is cut, so no part of a key shows."""
    text = "absent" if value is ABSENT else redact_text(repr(value)).text
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _sets_sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sets_sorted(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_sets_sorted(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return value

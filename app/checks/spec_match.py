"""Does a job's `config.json` equal the spec its run was issued with? Every field that differs.

Both sides are read as Harbor reads them (`hbench.jobs.config.JobConfig`), with Harbor's
defaults put back: Harbor writes `config.json` without default values, so an absent key
equals its default, and `n_attempts: 1` in the spec equals no `n_attempts` in the job.
Keys Harbor does not know are ignored on both sides, as Harbor ignores them. Only
`jobs_dir` and `retry.max_retries` may differ: they are the two flags `hbench run` takes
besides the spec (../shared/spec/hbench-issue-a-run.txt).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.uploads.redact import redact_text
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

    def describe(self) -> str:
        return f"{self.field} is {shown(self.ran)} in the job, {shown(self.issued)} in the spec"


def spec_differences(spec: Mapping[str, Any], config: JobConfig) -> list[Difference]:
    """Every field of `config` that differs from `spec`, in field order; empty when equal."""
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

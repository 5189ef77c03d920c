"""The secret patterns redaction looks for: gitleaks' default rules, vendored, and our own.

Both files are in gitleaks' rule format (`app/uploads/rules/`): each rule has an `id`,
a `regex` in RE2 syntax, the capture group holding the secret (`secretGroup`, else the
first group that matched, else the whole match), an `entropy` threshold the secret must
exceed, `keywords`, and allowlists of values that are not secrets. Our file adds the
keys `replaces`, `prefilters`, `fallback`, `kind`, `min_length`, `max_length` and
`global_allowlist` (described at its top).

Allowlists keep gitleaks' meaning, except that a rule's `paths` never allow anything:
a job's file names say nothing about whether a value in it is a key, and an uploader
chooses them. Rules that apply only to some paths (`path`) are tried only on files
whose path matches.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"
GITLEAKS_FILE = RULES_DIR / "gitleaks.toml"
OWN_FILE = RULES_DIR / "hbench.toml"
_UPSTREAM = re.compile(r"^# upstream-(version|commit): (\S+)$", re.MULTILINE)

Kind = Literal["pattern", "assignment", "any-assignment"]
Target = Literal["secret", "match", "line"]


class PatternSetError(ValueError):
    """A rule file that can't be used as it is: which file, which rule, and why."""


@dataclass(frozen=True)
class Allowlist:
    """Values a rule finds that are not secrets (gitleaks' `[[rules.allowlists]]`)."""

    regexes: tuple[str, ...] = ()
    target: Target = "secret"
    stopwords: tuple[str, ...] = ()
    condition: Literal["OR", "AND"] = "OR"
    has_paths: bool = False
    """The allowlist names paths, which never match here: with AND it never applies."""


@dataclass(frozen=True)
class Pattern:
    """One kind of secret, as gitleaks describes it."""

    id: str
    description: str
    regex: str
    source: Literal["gitleaks", "hbench"]
    secret_group: int = 0
    entropy: float = 0.0
    keywords: tuple[str, ...] = ()
    path: str | None = None
    allowlists: tuple[Allowlist, ...] = ()
    kind: Kind = "pattern"
    fallback: bool = False
    min_length: int = 0
    max_length: int = 0
    prefilter: str | None = None
    """What Hyperscan's pass looks for instead of `regex`: a part of every match."""
    global_allowlist: bool = True
    """Whether gitleaks' global allowlist applies (hbench.toml's `global_allowlist`)."""


@dataclass(frozen=True)
class PatternSet:
    """Every rule in use, most specific first, and the allowlist all of them share."""

    rules: tuple[Pattern, ...]
    allowlist: Allowlist
    upstream_version: str
    upstream_commit: str
    replaced: dict[str, str] = field(default_factory=dict)
    """gitleaks rule id -> the rule of ours that does its work instead."""
    without_regex: tuple[str, ...] = ()
    """gitleaks rules that match file names only (such as `pkcs12-file`): a binary file
    is never redacted, so they have nothing to do here."""

    def rule(self, rule_id: str) -> Pattern:
        return next(rule for rule in self.rules if rule.id == rule_id)


def _allowlist(raw: dict[str, Any], where: str) -> Allowlist:
    target = raw.get("regexTarget", "secret")
    condition = raw.get("condition", "OR").upper()
    if target not in ("secret", "match", "line") or condition not in ("OR", "AND"):
        raise PatternSetError(
            f"{where}: allowlist with regexTarget {target!r}, condition {condition!r}"
        )
    return Allowlist(
        regexes=tuple(raw.get("regexes", ())),
        target=target,
        stopwords=tuple(word.lower() for word in raw.get("stopwords", ())),
        condition=condition,
        has_paths=bool(raw.get("paths")),
    )


def _rule(raw: dict[str, Any], source: Literal["gitleaks", "hbench"], where: str) -> Pattern:
    try:
        return Pattern(
            id=raw["id"],
            description=raw.get("description", ""),
            regex=raw["regex"],
            source=source,
            secret_group=int(raw.get("secretGroup", 0)),
            entropy=float(raw.get("entropy", 0.0)),
            keywords=tuple(raw.get("keywords", ())),
            path=raw.get("path"),
            allowlists=tuple(
                _allowlist(a, f"{where} rule {raw['id']}") for a in raw.get("allowlists", ())
            ),
            kind=raw.get("kind", "pattern"),
            fallback=bool(raw.get("fallback", False)),
            min_length=int(raw.get("min_length", 0)),
            max_length=int(raw.get("max_length", 0)),
            global_allowlist=bool(raw.get("global_allowlist", True)),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise PatternSetError(
            f"{where}: rule {raw.get('id', '?')} is malformed: {error}"
        ) from error


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PatternSetError(f"{path.name} is not valid TOML: {error}") from error


def load_patterns(gitleaks: Path = GITLEAKS_FILE, own: Path = OWN_FILE) -> PatternSet:
    """Read both rule files: gitleaks' rules, then our specific ones, then our fallbacks.

    Where two rules find one secret, the one listed first names it: a GitHub token in a
    URL is `github-app-token`, not `url-password`."""
    text, upstream = _read(gitleaks)
    _, ours = _read(own)
    header = dict(_UPSTREAM.findall(text))
    if set(header) != {"version", "commit"}:
        raise PatternSetError(f"{gitleaks.name} has no upstream-version/commit header lines")
    replaced: dict[str, str] = dict(ours.get("replaces", {}))
    theirs = upstream.get("rules", [])
    missing = set(replaced) - {raw["id"] for raw in theirs}
    if missing:
        raise PatternSetError(
            f"{own.name} replaces {', '.join(sorted(missing))}, which {gitleaks.name} no "
            "longer has: remove them from `replaces`, or replace their successors"
        )
    with_regex = [raw for raw in theirs if "regex" in raw and raw["id"] not in replaced]
    imported = [_rule(raw, "gitleaks", gitleaks.name) for raw in with_regex]
    own_rules = [_rule(raw, "hbench", own.name) for raw in ours.get("rules", [])]
    rules = (
        imported + [r for r in own_rules if not r.fallback] + [r for r in own_rules if r.fallback]
    )
    prefilters: dict[str, str] = dict(ours.get("prefilters", {}))
    unknown_prefilters = sorted(set(prefilters) - {rule.id for rule in rules})
    if unknown_prefilters:
        raise PatternSetError(f"{own.name} has prefilters for unknown rules {unknown_prefilters}")
    rules = [replace(rule, prefilter=prefilters.get(rule.id)) for rule in rules]
    ids = [rule.id for rule in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise PatternSetError(f"rule ids used twice: {', '.join(duplicates)}")
    unknown = sorted(set(replaced.values()) - set(ids))
    if unknown:
        raise PatternSetError(f"{own.name} replaces gitleaks rules with unknown rules {unknown}")
    return PatternSet(
        rules=tuple(rules),
        allowlist=_allowlist(upstream.get("allowlist", {}), f"{gitleaks.name} allowlist"),
        upstream_version=header["version"],
        upstream_commit=header["commit"],
        replaced=replaced,
        without_regex=tuple(raw["id"] for raw in theirs if "regex" not in raw),
    )


@cache
def default_patterns() -> PatternSet:
    """The rule set the service uses, read once."""
    return load_patterns()

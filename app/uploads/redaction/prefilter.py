"""What Hyperscan's pass looks for, for each rule: a part of every match of the rule.

A rule whose regex starts with a literal (`glagent-[0-9a-zA-Z_\\-]{50}`) is looked for
by that literal and the class after it. The whole regex would find the same texts and
some more, but Hyperscan then counts the 50 characters from every `glagent-` of a run
of them, at about 3 MiB/s; the literal is found at over 50 MiB/s on the same run, and
as fast as the regex on ordinary text. RE2 checks every match against the whole rule,
so looking for less only costs a search that finds nothing (engine.py bounds those).
A prefilter written in `hbench.toml` comes first. A regex is looked for whole unless it
starts with a literal of `MIN_LITERAL` characters or more that is shaped like a key's
prefix (`glpat-`, `xoxb-`, `shpat_`: with a digit, `_` or `-`); a word (`bearer`) or a
scheme (`https://`) is common enough in ordinary text that looking for it alone would
make work there.
"""

from __future__ import annotations

from .patterns import Pattern

MIN_LITERAL = 5
"""Shorter literals are too common (`sk-` in `task-1`) to stand for a rule."""
_META = frozenset("\\^$.|?*+()[]{}")
_QUANTIFIERS = frozenset("?*+{")
_OPENERS = ("(?i)", "\\b", "(?:", "(")
_KEYISH = frozenset("0123456789_-")


def literal_prefix(regex: str) -> tuple[str, str, int]:
    """(the regex text before the literal, the literal's regex text, its length in
    characters) for the literal every match starts with; ("", "", 0) if none is sure."""
    rest, before, depth = regex, "", 0
    while opener := next((o for o in _OPENERS if rest.startswith(o)), None):
        before += opener
        rest = rest[len(opener) :]
        depth += opener.startswith("(") and opener != "(?i)"
    i, length = 0, 0
    while i < len(rest):
        char = rest[i]
        if char == "\\" and i + 1 < len(rest) and rest[i + 1] in "._-/":
            i, length = i + 2, length + 1
        elif char in _META:
            break
        else:
            i, length = i + 1, length + 1
    end = rest[i : i + 1]
    if end in _QUANTIFIERS and length:
        # The literal's last character is optional or repeated: it is not sure.
        i -= 2 if i >= 2 and rest[i - 2] == "\\" else 1
        length -= 1
    if end == "|" or _alternation_around(rest, depth):
        return ("", "", 0)
    return (before, rest[:i], length)


def _alternation_around(rest: str, depth: int) -> bool:
    """Whether a `|` outside the groups the literal is in lets a match skip it."""
    level, i, in_class = depth, 0, False
    while i < len(rest):
        char = rest[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            level += 1
        elif char == ")":
            level -= 1
        elif char == "|" and level <= depth:
            return True
        i += 1
    return False


def _class_after(rest: str) -> str:
    """The character class `rest` starts with, if it starts with a plain one."""
    if not rest.startswith("[") or "[:" in rest[:3]:
        return ""
    i = 1
    while i < len(rest) and rest[i] != "]":
        i += 2 if rest[i] == "\\" else 1
    return rest[: i + 1] if i < len(rest) else ""


def hyperscan_pattern(rule: Pattern) -> str:
    """The regex Hyperscan's pass uses for `rule`."""
    if rule.prefilter:
        return rule.prefilter
    before, literal, length = literal_prefix(rule.regex)
    if length < MIN_LITERAL or "://" in literal or not any(c in literal for c in _KEYISH):
        return rule.regex
    rest = rule.regex[len(before) + len(literal) :]
    flags = "(?i)" if before.startswith("(?i)") else ""
    boundary = "\\b" if "\\b" in before else ""
    return flags + boundary + literal + _class_after(rest)


def hop_pattern(rule: Pattern) -> str:
    """The regex a hop (the search for a rule's next match) scans with: the rule's own,
    less a start of text (`(?:^|\\n)` becomes `(?:\\n)`). A hop scans a slice that starts
    one byte before where the last match ended, never at the text's start, and to
    Hyperscan every slice's first byte is one."""
    return rule.regex.replace("(?:^|", "(?:")

"""One rule, compiled for RE2: where its match's secret is, and whether it counts.

A match counts when one of the rule's keywords is in it or just before it, its secret
is over the rule's entropy threshold and stands for nothing else (`${VAR}`, `<key>`),
and no allowlist (gitleaks' global one, or the rule's own) allows it. The generic
rules (`kind` "assignment" and "any-assignment") ask more of the name and value:
`values.py`. Matches are RE2's raw spans, one `(start, end)` per group, with no match
object made: these checks run once per match, which is where the time goes when a text
is dense with key-shaped strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import re2

from .patterns import Allowlist, Pattern, PatternSetError
from .values import (
    entropy,
    holds_identifiers,
    is_key_like,
    is_password_name,
    is_prose,
    is_words,
    looks_like_code,
    looks_random,
    stands_for_a_secret,
)

KEYWORD_REACH = 256
"""A match counts only with one of its rule's keywords in it or this close before it.
gitleaks asks for a keyword anywhere in the file; some rules need one (the 40 hex digits
of `sourcegraph-access-token` are any git commit without the word `sourcegraph`), and
looking near the match keeps each finding independent of where a file is cut in chunks."""
LINE_REACH = 4096
"""How far an allowlist that reads a match's line looks on either side of it."""
_NAME_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_TOKEN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# google-re2 wraps its raw search (`_regexp.Match`) in a generator and a match object
# each call; the checks search once per match, so they call the raw search directly.
_UNANCHORED = re2._Anchor.UNANCHORED
_ANCHOR_START = re2._Anchor.ANCHOR_START

Span = tuple[int, int]
Spans = Sequence[Span]
"""The whole match's span, then each group's; (-1, -1) for a group that took no part."""


def _options() -> re2.Options:
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1  # bytes, as Hyperscan reads them
    options.log_errors = False
    return options


_LATIN1 = _options()
_REPEAT = re.compile(r"\{(\d+),(\d+)\}")


_LOOSEN_FROM = 100
"""Counted repeats with an upper bound this high or higher are read without it by RE2."""


def loosened(pattern: str) -> str:
    """`pattern` with each repeat `{m,n}` of n >= 100 written `{m,}`, outside classes.

    RE2 compiles `[\\w-]{50,1000}` to a thousand copies of the class, whose DFA needs a
    new state for nearly every byte of a long token: 20 times slower than `{50,}`. The
    looser regex matches all the original does, and some longer matches, which for
    redaction means the rest of a long token goes too. Hyperscan's pass keeps the
    original, so no match is found that the rule would not find.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]" or pattern[i - 1] == "["
        elif char == "[":
            in_class = True
        elif char == "{" and (repeat := _REPEAT.match(pattern, i)):
            low, high = repeat.groups()
            out.append(f"{{{low},}}" if int(high) >= _LOOSEN_FROM else repeat.group())
            i = repeat.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


def compile_re2(pattern: str, where: str) -> re2._Regexp:
    try:
        return re2.compile(pattern.encode(), _LATIN1)
    except re2.error as error:
        raise PatternSetError(f"{where}: RE2 can't compile {pattern!r}: {error}") from error


class CompiledAllowlist:
    """An allowlist, its regexes joined into one."""

    def __init__(self, allow: Allowlist, where: str) -> None:
        self.allow = allow
        joined = "|".join(f"(?:{pattern})" for pattern in allow.regexes)
        self.regex = compile_re2(joined, where)._regexp if joined else None
        self.stopwords = tuple(word.encode() for word in allow.stopwords)

    def allows(self, secret: bytes, line: Callable[[], bytes], match: bytes) -> bool:
        checks: list[bool] = []
        if self.allow.has_paths:
            checks.append(False)
        if self.regex is not None:
            target = {"secret": secret, "match": match}.get(self.allow.target)
            subject = line() if target is None else target
            checks.append(self.regex.Match(_UNANCHORED, subject, 0, len(subject))[0][0] >= 0)
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(word in lowered for word in self.stopwords))
        if not checks:
            return False
        return all(checks) if self.allow.condition == "AND" else any(checks)


class CompiledRule:
    """A rule's regex, path filter, keywords and allowlists, ready to check matches."""

    _TOKEN_TAIL = compile_re2("[A-Za-z0-9_-]{0,512}", "token tail")._regexp

    def __init__(self, rule: Pattern, shared: CompiledAllowlist) -> None:
        self.rule = rule
        where = f"rule {rule.id}"
        regex = compile_re2(loosened(rule.regex), where)
        self._raw = regex._regexp
        self.groups = regex.groups
        self.path = compile_re2(rule.path, f"{where} path") if rule.path else None
        self.keywords = (
            re.compile(b"|".join(re.escape(k.encode()) for k in rule.keywords), re.IGNORECASE)
            if rule.keywords
            else None
        )
        own = (CompiledAllowlist(a, f"{where} allowlist") for a in rule.allowlists)
        self.allowlists = (shared, *own) if rule.global_allowlist else tuple(own)
        self.reads_lines = any(a.allow.target == "line" for a in self.allowlists)
        self.pairs = _pairs(rule, regex) if rule.kind != "pattern" else ()

    def applies_to(self, path: str | None) -> bool:
        return self.path is None or (path is not None and self.path.search(path) is not None)

    def search(self, text: bytes, start: int, end: int) -> Spans | None:
        """The leftmost match in text[start:end], the text around it read as context."""
        spans: Spans = self._raw.Match(_UNANCHORED, text, start, end)
        return spans if spans[0][0] >= 0 else None

    def secret(
        self, spans: Spans, text: bytes, verdicts: dict[tuple[int, bytes], Span | None]
    ) -> Span | None:
        """The span to redact for this match, or None if the match is not a secret.

        `verdicts` remembers, for one text, what the checks said of each match by its
        bytes (and the two before and one after, which the checks read too), so a text
        that repeats a key-shaped string pays for its checks once."""
        if not self._near_keyword(spans[0], text):
            return None
        start, end = spans[0]
        if self.reads_lines:
            verdict = self._verdict(spans, text)
        else:
            context = max(0, start - 2)
            key = (start - context, text[context : end + 1])
            if key in verdicts:
                found = verdicts[key]
                verdict = None if found is None else (found[0] + start, found[1] + start)
            else:
                verdict = self._verdict(spans, text)
                verdicts[key] = (
                    None if verdict is None else (verdict[0] - start, verdict[1] - start)
                )
        if verdict is None or self.pairs:
            return verdict
        return self._with_token_tail(verdict, text)

    def resume(self, spans: Spans, *, kept: bool) -> int:
        """Where to look for the rule's next match after this one: after the match, but
        for an assignment, in its value if it was kept (`A_KEY=0000:B_TOKEN=…` is one
        unquoted value to the regex, and would hide the assignment inside it) and right
        after it if it was redacted (`"a_token":"…""b_token":"…"` share a quote)."""
        pair = next((p for p in self.pairs if spans[p[1]][0] >= 0), None)
        if pair is None:
            return spans[0][1]
        start, end = spans[pair[1]]
        return start if kept else end

    def _with_token_tail(self, span: Span, text: bytes) -> Span:
        start, end = span
        if end < len(text) and text[end] in _TOKEN_CHARS and text[end - 1] in _TOKEN_CHARS:
            # A rule of fixed length (`ghp_` and 36 characters) on a longer token: the
            # rest of the token goes too, rather than being left beside `[REDACTED]`.
            end = self._TOKEN_TAIL.Match(_ANCHOR_START, text, end, len(text))[0][1]
        return (start, end)

    def _verdict(self, spans: Spans, text: bytes) -> Span | None:
        if self.pairs:
            return self._assigned(spans, text)
        group = self.rule.secret_group or next(
            (g for g in range(1, self.groups + 1) if spans[g][0] < spans[g][1]), 0
        )
        start, end = spans[group]
        if start < 0:
            return None
        secret = text[start:end]
        if self.rule.entropy and entropy(secret) <= self.rule.entropy:
            return None
        if stands_for_a_secret(secret) or self._allowed(secret, spans[0], text):
            return None
        return (start, end)

    def _near_keyword(self, match: Span, text: bytes) -> bool:
        if self.keywords is None:
            return True
        # Literals only, over at most KEYWORD_REACH bytes and the match: Python's `re`
        # does not backtrack on these.
        return self.keywords.search(text, max(0, match[0] - KEYWORD_REACH), match[1]) is not None

    def _assigned(self, spans: Spans, text: bytes) -> Span | None:
        pair = next((p for p in self.pairs if spans[p[1]][0] >= 0), None)
        if pair is None:
            return None
        (name_start, name_end), (start, end) = spans[pair[0]], spans[pair[1]]
        escaped = text[name_start - 2 : name_start] in (b"\\n", b"\\r", b"\\t")
        if name_start > 0 and text[name_start - 1] in _NAME_CHARS and not escaped:
            return None  # the regex began inside a longer name
        name, value = text[name_start:name_end], text[start:end]
        if name_start > 0 and text[name_start - 1] == 0x5C and name[:1] in (b"n", b"r", b"t"):
            name = name[1:]  # `\nGITHUB_TOKEN=` inside a JSON string
        code = looks_like_code(
            name,
            value,
            quoted=start > 0 and text[start - 1] in b"\"'",
            separator=text[name_end:start].strip(b" \t\"'\\"),
            after=text[end : end + 1],
        )
        if code or stands_for_a_secret(value) or not self._value_counts(name, value):
            return None
        return None if self._allowed(value, spans[0], text) else (start, end)

    def _value_counts(self, name: bytes, value: bytes) -> bool:
        rule = self.rule
        if rule.kind == "any-assignment":
            return not holds_identifiers(name) and looks_random(
                value,
                min_length=rule.min_length,
                max_length=rule.max_length,
                threshold=rule.entropy,
            )
        if not is_key_like(name) or entropy(value) <= rule.entropy:
            return False
        return is_password_name(name) or not (is_words(value) or is_prose(value))

    def _allowed(self, secret: bytes, match: Span, text: bytes) -> bool:
        start, end = match

        def line() -> bytes:
            first = text.rfind(b"\n", max(0, start - LINE_REACH), start) + 1
            last = text.find(b"\n", end, end + LINE_REACH)
            stop = last if last >= 0 else end + LINE_REACH
            return text[first or max(0, start - LINE_REACH) : stop]

        whole = text[start:end]
        return any(allow.allows(secret, line, whole) for allow in self.allowlists)


def _pairs(rule: Pattern, regex: re2._Regexp) -> tuple[tuple[int, int], ...]:
    """Each value group of an assignment rule, with the name group before it."""
    names = sorted(i for g, i in regex.groupindex.items() if g.startswith(b"n"))
    values = sorted(i for g, i in regex.groupindex.items() if g.startswith(b"v"))
    if not names or not values or values[0] < names[0]:
        raise PatternSetError(f"rule {rule.id}: an assignment needs groups n1.. before v1..")
    return tuple((max(n for n in names if n < v), v) for v in values)

"""The scanner: every rule in one Hyperscan pass, then each rule that matched is located
and checked with RE2 in bounded windows, so no input costs more than linear time.

1. One Hyperscan scan of the text with every rule's regex (each reports its first match
   only) says which rules match anywhere and where the first match of each ends.
   Ordinary text matches none: that one pass is the whole cost.
2. For each rule that matched, RE2 finds the match itself, with its groups, searching
   only from `REACH` bytes before the end Hyperscan reported to `2 REACH` bytes after.
   The next match of that rule is looked for by RE2 in the `NEAR` bytes after the last,
   and past them by a Hyperscan scan of that rule's own regex alone (step 1 may look for
   a part of it only: `prefilter.py`). Each byte is scanned a bounded
   number of times per rule that matches, whatever the text: RE2's own `finditer` can
   be quadratic (a regex like `[ab]*c|a` rescans the rest of a run of `a` for each `a`);
   searches bounded like these can't.

Hyperscan was chosen over an RE2 `Set` by measurement (docs/redaction.md): both are
linear, but an RE2 `Set` of gitleaks' rules builds a new DFA state for nearly every
byte of random base64 and scans it at about 0.01 MiB/s, where Hyperscan scans it at
over 100 MiB/s. Hyperscan has no capture groups, hence RE2 for step 2. Both read text
as bytes (RE2 as Latin-1), so their classes and counts agree.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from .checks import CompiledAllowlist, CompiledRule, Spans
from .hyperscan_pass import HyperscanPass
from .patterns import PatternSet, default_patterns
from .unescaped import Unescaped

REACH = 20 * 1024
"""The longest match found whole (a private key of 16 KiB fits, with its markers)."""
BACK = 256
"""How far back from the end Hyperscan reported RE2 looks first for the match's start."""
NEAR = 256
"""Where RE2 looks for a rule's next match itself before asking Hyperscan: keys often
come in runs (an env dump, a list of tokens), and a short search costs less than a hop."""


_VERDICTS = 4096
"""How many matches' verdicts a rule remembers within one text."""


@dataclass(frozen=True)
class Finding:
    """A secret: the rule that found it and its byte span."""

    rule: str
    start: int
    end: int


@dataclass(frozen=True)
class Scan:
    """What a window holds: its secrets, and where each rule's search goes on."""

    findings: list[Finding]
    resume: dict[int, int]
    """Rule index -> where its search goes on after its last match that starts before
    the window's limit (`Engine.scan`)."""


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans joined where they overlap: sorted, and apart."""
    union: list[tuple[int, int]] = []
    for start, end in spans:
        if union and start < union[-1][1]:
            union[-1] = (union[-1][0], max(union[-1][1], end))
        else:
            union.append((start, end))
    return union


def _overlaps(union: list[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    """Whether [start, end) meets one of `union`'s spans: the last one starting before end."""
    i = bisect.bisect_left(starts, end)
    return i > 0 and union[i - 1][1] > start


class Engine:
    """Finds the secrets in a text with one rule set; safe to share between threads."""

    def __init__(self, patterns: PatternSet) -> None:
        self.patterns = patterns
        shared = CompiledAllowlist(patterns.allowlist, "global allowlist")
        self.rules = tuple(CompiledRule(rule, shared) for rule in patterns.rules)
        self._hyperscan = HyperscanPass(patterns)

    def check(self) -> None:
        """Compile every rule's own Hyperscan database now, not when first needed."""
        for index in range(len(self.rules)):
            self._hyperscan.hop(index)

    def matching(self, text: bytes) -> list[str]:
        """The rules whose Hyperscan pattern matches somewhere in `text`: step 1 alone."""
        view = Unescaped.of(text).view
        return [self.rules[i].rule.id for i in sorted(self._first_ends(view))]

    def find(self, text: bytes, *, skip_before: int = 0, path: str | None = None) -> list[Finding]:
        """The secrets in `text` starting at `skip_before` or later, in order; where two
        overlap they are joined, named by the one that starts first (or, at one start,
        by the rule listed first)."""
        return self.scan(text, skip_before=skip_before, path=path).findings

    def scan(
        self,
        text: bytes,
        *,
        skip_before: int = 0,
        path: str | None = None,
        limit: int | None = None,
        starts: Mapping[int, int] | None = None,
    ) -> Scan:
        """As `find`, for one window of a longer text: each rule's search begins where
        `starts` says (where it went on after its last match in the window before), and
        the answer says where each goes on after its last match that starts before
        `limit`. So the windows find what one search of the whole text would, even where
        one rule's matches are chained (`A=1 A=2 …`, each beginning where one ended)."""
        limit = len(text) if limit is None else limit
        unescaped = Unescaped.of(text)
        if not unescaped.before:
            return self._search(text, skip_before, path, limit, starts or {})
        inward, outward = unescaped.inward, unescaped.outward
        scan = self._search(
            unescaped.view,
            inward(skip_before),
            path,
            inward(limit),
            {index: inward(at) for index, at in (starts or {}).items()},
        )
        return Scan(
            [Finding(f.rule, outward(f.start), outward(f.end)) for f in scan.findings],
            {index: outward(at) for index, at in scan.resume.items()},
        )

    def _search(
        self,
        text: bytes,
        skip_before: int,
        path: str | None,
        limit: int,
        starts: Mapping[int, int],
    ) -> Scan:
        found: list[tuple[int, int, int]] = []
        resume: dict[int, int] = {}
        for index, first_end in sorted(self._first_ends(text).items()):
            rule = self.rules[index]
            if not rule.applies_to(path):
                continue
            marks: dict[int, int] = {}
            start = starts.get(index, 0)
            for span in self._secrets(
                index, text, first_end, start=start, limit=limit, marks=marks
            ):
                if span[0] >= skip_before and span[1] > span[0]:
                    found.append((span[0], index, span[1]))
            if index in marks:
                resume[index] = marks[index]
        return Scan(self._joined(found), resume)

    def _joined(self, found: list[tuple[int, int, int]]) -> list[Finding]:
        """Where a fallback's secret overlaps a specific rule's, the specific one knows its
        edges better (`"Authorization": "token …"` keeps its scheme): the fallback's goes."""
        specific = _union(sorted((s, e) for s, i, e in found if not self.rules[i].rule.fallback))
        starts = [s for s, _ in specific]
        kept = [
            (s, i, e)
            for s, i, e in found
            if not self.rules[i].rule.fallback or not _overlaps(specific, starts, s, e)
        ]
        joined: list[Finding] = []
        for start, index, end in sorted(kept):
            if joined and start < joined[-1].end:
                last = joined[-1]
                joined[-1] = Finding(last.rule, last.start, max(last.end, end))
            else:
                joined.append(Finding(self.rules[index].rule.id, start, end))
        return joined

    def _first_ends(self, text: bytes) -> dict[int, int]:
        """Step 1 alone (`bench/redaction.py` times it): each matching rule's first end."""
        return self._hyperscan.first_ends(text)

    # --- RE2: step 2, in bounded windows ----------------------------------------------------

    def _secrets(
        self,
        index: int,
        text: bytes,
        first_end: int,
        *,
        start: int,
        limit: int,
        marks: dict[int, int],
    ) -> Iterator[tuple[int, int]]:
        """The rule's secrets in `text` from `start`, its first match anywhere ending at
        `first_end`; `marks[index]` is left where the search goes on after the last match
        kept, or secret, or stretch found empty, that starts before `limit`."""
        rule = self.rules[index]
        verdicts: dict[tuple[int, bytes], tuple[int, int] | None] = {}
        size = len(text)
        pos = start
        end = first_end if first_end > pos else self._hyperscan.next_end(index, text, pos)
        while end is not None:
            spans = self._around(rule, text, pos, end)
            if spans is None:
                # Hyperscan's wider syntax, or a prefilter's match: no match of REACH bytes
                # or fewer starts before end + REACH, and the search cost at most 3 REACH.
                if pos < limit:
                    marks[index] = min(size, end + REACH)
                pos = min(size, end + REACH)
            while spans is not None:
                if len(verdicts) > _VERDICTS:
                    verdicts.clear()
                secret = rule.secret(spans, text, verdicts)
                if secret is not None:
                    yield secret
                pos = max(rule.resume(spans, kept=secret is None), pos + 1)
                # A secret from `limit` on is the next window's to find and redact, so the
                # search must go on from before it there.
                if (spans[0][0] if secret is None else secret[0]) < limit:
                    marks[index] = pos
                spans = self._near(rule, text, pos)
            end = self._hyperscan.next_end(index, text, pos) if pos < size else None

    @staticmethod
    def _around(rule: CompiledRule, text: bytes, pos: int, end: int) -> Spans | None:
        """The rule's match around the end Hyperscan reported. RE2 looks back BACK bytes
        first (most matches are short, and RE2 scans these rules at tens of MiB/s), then
        four times as far each time what it finds may not be that match, up to REACH."""
        size = len(text)
        floor = max(pos, end - REACH)
        back = BACK
        while True:
            start = max(floor, end - back)
            spans = rule.search(text, start, min(size, end + 2 * REACH))
            # Found whole if it begins inside the window and before `end`: one that
            # begins at `end` or later is another, and the reported one began earlier.
            if start == floor or (spans is not None and start < spans[0][0] < end):
                return spans
            back *= 4

    @staticmethod
    def _near(rule: CompiledRule, text: bytes, pos: int) -> Spans | None:
        """The rule's next match if it starts within NEAR bytes of `pos`."""
        size = len(text)
        if pos >= size:
            return None
        start, stop = pos, min(size, pos + NEAR)
        spans = rule.search(text, start, stop)
        while spans is not None and spans[0][1] == stop < size and stop - start < REACH:
            # It reaches the window's end, so it may go on: search again from where it
            # starts, twice as far each time, so a long match costs about twice its length.
            start = spans[0][0]
            stop = min(size, start + min(REACH, max(NEAR, 2 * (stop - start))))
            spans = rule.search(text, start, stop)
        return spans


_compiling = threading.Lock()


def default_engine() -> Engine:
    """The engine over the service's rule set, compiled once per process: callers that
    come while it compiles wait for it (a cache alone would let twenty concurrent first
    requests compile twenty engines, a second of CPU each)."""
    with _compiling:
        return _default_engine()


@cache
def _default_engine() -> Engine:
    return Engine(default_patterns())

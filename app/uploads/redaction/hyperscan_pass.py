"""Hyperscan's part of a scan (`app.uploads.redaction.engine` says how it and RE2's fit):
step 1, every rule's regex in one database, each reporting where its first match ends;
and the hops, each rule's own regex alone, finding where its next match ends.
"""

from __future__ import annotations

import contextlib
import threading
from typing import cast

import hyperscan

from .compiled import compiled  # once per machine, then read back
from .patterns import PatternSet, PatternSetError
from .prefilter import hop_pattern, hyperscan_pattern

HOP = 4096
"""The first slice a hop scans for a rule's next match; each next one is twice as long."""


class HyperscanPass:
    """The rule set's Hyperscan databases; safe to share between threads."""

    def __init__(self, patterns: PatternSet) -> None:
        self.patterns = patterns
        self._patterns = tuple(hyperscan_pattern(r).encode() for r in patterns.rules)
        self._scan = self._compile_all()
        self._hops: dict[int, hyperscan.Database] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    def _compile_all(self) -> hyperscan.Database:
        try:
            return compiled(self._patterns, hyperscan.HS_FLAG_SINGLEMATCH)
        except hyperscan.HyperscanError:
            for rule, pattern in zip(self.patterns.rules, self._patterns, strict=True):
                try:
                    compiled([pattern], hyperscan.HS_FLAG_SINGLEMATCH)
                except hyperscan.HyperscanError as error:
                    raise PatternSetError(
                        f"rule {rule.id}: Hyperscan can't compile {pattern.decode()!r}: {error}"
                    ) from error
            raise

    def _scratch(self, database: hyperscan.Database) -> hyperscan.Scratch:
        """Hyperscan's scratch space is per thread and per database."""
        scratches: dict[int, hyperscan.Scratch] = self._local.__dict__.setdefault("s", {})
        scratch = scratches.get(id(database))
        if scratch is None:
            scratch = scratches[id(database)] = hyperscan.Scratch(database=database)
        return scratch

    def first_ends(self, text: bytes) -> dict[int, int]:
        """Rule index -> where its first match in `text` ends: step 1, one scan for all."""
        ends: dict[int, int] = {}

        def on_match(index: int, _from: int, end: int, _flags: int, _context: object) -> None:
            ends.setdefault(index, end)

        self._scan.scan(text, match_event_handler=on_match, scratch=self._scratch(self._scan))
        return ends

    def hop(self, index: int) -> hyperscan.Database:
        database = self._hops.get(index)
        if database is None:
            with self._lock:
                database = self._hops.get(index)
                if database is None:
                    # The rule's own regex, not its prefilter: a hop stops at the first
                    # match, so the exact regex costs little even on a run of matches,
                    # and reports no match that RE2 then has to search for in vain.
                    exact = hop_pattern(self.patterns.rules[index]).encode()
                    database = self._hops[index] = compiled([exact], 0)
        return database

    def next_end(self, index: int, text: bytes, pos: int) -> int | None:
        """Where the rule's next match after `pos` ends, by its own Hyperscan database.

        Hyperscan may scan to the end of what it is given before it reports a match,
        whatever the callback answers, so a hop scans a slice from `pos`, twice as long
        each time it finds nothing: a hop costs about twice the way to the next match,
        not the rest of the text (which, hop after hop, would be quadratic)."""
        database = self.hop(index)
        scratch = self._scratch(database)
        view = memoryview(text)  # slices of a view are not copies
        ends: list[int] = []

        def on_match(_index: int, _from: int, end: int, _flags: int, _context: object) -> bool:
            ends.append(end)
            return first + end > pos  # the first end past `pos` is all a hop needs

        # From the byte before `pos`, so that `\b` and a line's start read as in the text.
        first = max(0, pos - 1)
        step = HOP
        while True:
            stop = min(len(text), pos + step)
            with contextlib.suppress(hyperscan.ScanTerminated):
                # Hyperscan reads any buffer; its stubs name only str and bytes.
                database.scan(
                    cast(bytes, view[first:stop]), match_event_handler=on_match, scratch=scratch
                )
            found = [first + end for end in ends if first + end > pos]
            if found:
                return found[0]
            if stop == len(text):
                return None
            ends.clear()
            step *= 2

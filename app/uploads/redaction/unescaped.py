"""A text with its escaped quotes read as quotes, for rules written for unescaped text, and
the way back from the view's offsets to the text's (`app.uploads.redaction.engine`)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from itertools import accumulate

_ESCAPED_QUOTE = b'\\"'


@dataclass(frozen=True)
class Unescaped:
    """A text with its escaped quotes (`\\"`) read as quotes, and the way back.

    A key in a JSON string, as an agent's trajectory holds a command's output, has its
    quotes escaped: `api_token = \\"…\\"`. gitleaks' rules, written for code and
    configs, ask for a quote or a space around a key, not a backslash; in the view each
    `\\"` is `"`, so they read the text as it was before it was escaped. Spans found in the
    view are mapped back to the text, a quote's backslash going with its quote."""

    view: bytes
    before: list[int]
    """Before the k-th escaped quote, the text holds `before[k] + 2 k` bytes and the view
    `before[k] + k` (counted in C: a trajectory may hold a hundred thousand in a MiB)."""

    @classmethod
    def of(cls, text: bytes) -> Unescaped:
        if _ESCAPED_QUOTE not in text:
            return cls(text, [])
        # `\\"` can't overlap itself, so `split` finds what `replace` replaces.
        parts = text.split(_ESCAPED_QUOTE)
        before = list(accumulate(map(len, parts[:-1])))
        return cls(text.replace(_ESCAPED_QUOTE, b'"'), before)

    def inward(self, offset: int) -> int:
        """The view's offset of the text's `offset` (a backslash's is its quote's)."""
        before = self.before
        return offset - bisect.bisect_left(
            range(len(before)), offset, key=lambda k: before[k] + 2 * k
        )

    def outward(self, offset: int) -> int:
        """The text's offset of the view's `offset` (a quote's is its backslash's)."""
        before = self.before
        return offset + bisect.bisect_left(range(len(before)), offset, key=lambda k: before[k] + k)

"""Hypothesis strategies for names over all of Unicode, aimed where names mislead: letters
that look like Latin ones (Cyrillic, Greek), bidi controls, zero-width and other format
characters, combining marks and the four normal forms of one name, full-width forms,
control characters, lone surrogates (which a JSON body can carry as `\\ud800`) and very
long names. Each yields text a person might send as a name; `json_text` writes one as a
JSON string literal so lone surrogates reach the service as escapes."""

from __future__ import annotations

import json
import unicodedata
from typing import Literal

from hypothesis import strategies as st

CONFUSABLES = {
    "a": "\u0430\u03b1",  # Cyrillic a, Greek alpha
    "c": "\u0441\u03f2",
    "e": "\u0435\u03b5",
    "i": "\u0456\u03b9",
    "o": "\u043e\u03bf\u0585",
    "p": "\u0440\u03c1",
    "x": "\u0445\u03c7",
    "y": "\u0443\u03b3",
    "k": "\u043a\u03ba",
    "n": "\u043f\u03b7",
    "s": "\u0455",
    "-": "\u2010\u2011\u2012\u2013\u2212\ufe63\uff0d",
    ".": "\u2024\uff0e",
}
"""Characters a page shows like the key's ASCII one (after Unicode's confusables list)."""
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
COMBINING = "\u0300\u0301\u0302\u0308\u0327\u0338\u20dd"
CONTROLS = "".join(map(chr, range(0x20))) + "\x7f\x85\u2028\u2029"
SURROGATES = "\ud800\udbff\udc00\udfff"
FORMS: tuple[Literal["NFC", "NFD", "NFKC", "NFKD"], ...] = ("NFC", "NFD", "NFKC", "NFKD")

BASE = st.sampled_from(
    ["temperature", "oracle", "terminus-2", "gpt-5", "qwen2.5-coder-7b", "max_turns",
     "caf\u00e9", "\u212bngstr\u00f6m", "\ufb01le", "x\u00b2", "\u2460", "na\u00efve"]
)  # fmt: skip
"""Names to vary: plain ones, and ones whose normal forms differ (é, Å as the Ångström sign,
the ﬁ ligature, a superscript, a circled digit)."""


def full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@st.composite
def look_alike(draw: st.DrawFn, base: str | None = None) -> str:
    """`base` with some letters swapped for ones that look the same."""
    text = base if base is not None else draw(BASE)
    chars = list(text)
    for index, char in enumerate(chars):
        if char in CONFUSABLES and draw(st.booleans()):
            chars[index] = draw(st.sampled_from(CONFUSABLES[char]))
    return "".join(chars)


@st.composite
def with_inserted(draw: st.DrawFn, alphabet: str, base: str | None = None) -> str:
    """`base` with one to three characters of `alphabet` put in anywhere."""
    text = base if base is not None else draw(BASE)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(alphabet)) + text[at:]
    return text


@st.composite
def normal_form(draw: st.DrawFn, base: str | None = None) -> str:
    """`base` (or a name) in one of the four normal forms, or full-width."""
    text = base if base is not None else draw(BASE)
    if draw(st.booleans()):
        return full_width(text)
    return unicodedata.normalize(draw(st.sampled_from(FORMS)), text)


def hostile_names(*, surrogates: bool = False, max_size: int = 300) -> st.SearchStrategy[str]:
    """A name of any of the kinds above, or any Unicode text, short or very long."""
    kinds = [
        BASE,
        look_alike(),
        with_inserted(BIDI),
        with_inserted(ZERO_WIDTH),
        with_inserted(COMBINING),
        with_inserted(CONTROLS),
        normal_form(),
        st.text(min_size=0, max_size=40),
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=20),
        st.integers(101, max_size).map(lambda n: "n" * n),
    ]
    if surrogates:
        kinds.append(with_inserted(SURROGATES))
    return st.one_of(kinds)


def spellings_of(base: str) -> st.SearchStrategy[str]:
    """Other spellings of one name that a page would show alike (or nearly)."""
    return st.one_of(
        look_alike(base), normal_form(base), with_inserted(ZERO_WIDTH, base),
        with_inserted(BIDI, base),
    )  # fmt: skip


def json_text(text: str) -> str:
    """`text` as a JSON string literal, lone surrogates written as `\\uXXXX` escapes (a high
    one before a low one then reads back as the one character they encode)."""
    return json.dumps(text, ensure_ascii=True)


def has_hidden(text: str) -> bool:
    """Whether text holds a character a page shows as something else or not at all."""
    return any(unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"} or c in BIDI for c in text)

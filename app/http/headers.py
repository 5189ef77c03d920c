"""Header values built from names people chose: a download's file name, in any script.

HTTP header values are Latin-1 at most, and a job may be named in Greek, Arabic or emoji,
so `Content-Disposition` carries the name twice (RFC 6266 §4.3): `filename*` holds it
whole, as UTF-8 percent-encoded (RFC 5987), and `filename` an ASCII stand-in for clients
that read only that. Neither can hold a path separator, a quote or a control character.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

UNSAFE = re.compile(r'[\\/:*?"<>|]')
"""Characters no file name should carry: path separators and what file systems refuse."""
ATTR_CHARS = "!#$&+-.^_`|~"
"""RFC 5987's `attr-char` besides letters and digits: kept as they are in `filename*`."""
FALLBACK_KEEPS = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """The name with separators, reserved and control characters made `_`, and no leading
    dots (so it is never hidden, nor `..`)."""
    cleaned = "".join(
        "_" if UNSAFE.match(c) or unicodedata.category(c).startswith("C") else c for c in name
    )
    return cleaned.lstrip(".") or "download"


def ascii_fallback(name: str, default_stem: str) -> str:
    """An ASCII file name for `name`: accents dropped (`é` is `e`), other letters replaced,
    and `default_stem` in place of a stem with nothing Latin left."""
    stem, dot, suffix = name.partition(".")
    folded = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    ascii_stem = FALLBACK_KEEPS.sub("_", folded).strip("._-")
    if not any(c.isalnum() for c in ascii_stem):
        ascii_stem = default_stem
    ascii_suffix = FALLBACK_KEEPS.sub("_", suffix)
    return f"{ascii_stem}{dot}{ascii_suffix}"


def attachment(name: str, *, default_stem: str = "download") -> str:
    """A `Content-Disposition` for a download saved as `name`, in any script."""
    whole = safe_name(name)
    fallback = ascii_fallback(whole, default_stem)
    if fallback == whole:
        return f'attachment; filename="{fallback}"'
    encoded = quote(whole, safe=ATTR_CHARS, encoding="utf-8")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}"

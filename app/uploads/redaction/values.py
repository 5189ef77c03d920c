"""What a found value must be to count as a secret: entropy, placeholders, and, for the
generic rules, a key-like name or a random look.

Pure functions over bytes; `engine.py` calls them for each match a rule's regex makes.
"""

from __future__ import annotations

import math
import re

_PLACEHOLDER_STARTS = (b"$", b"{", b"<", b"[", b"%(", b"%{", b"#{", b"@")
_PLACEHOLDER_WORDS = frozenset(
    b"none null nil true false undefined changeme password secret redacted masked "
    b"placeholder example dummy sample".split()
)
_REDACTED_AFTER_A_WORD = re.compile(rb"[A-Za-z][A-Za-z_-]{0,31}(?:[:=]\s*|\s+)\[REDACTED\]")
"""`COOKIE:[REDACTED]`, `Bearer [REDACTED]`: a scheme or a header's name before what a
specific rule redacted, which a generic rule must not take for a new secret when it reads
the text again (redacting twice changes nothing). Letters alone: no key's head."""
_SEGMENT = re.compile(rb"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
KEY_WORDS = frozenset(
    b"key keys apikey token secret secrets password passwd pwd passphrase credential "
    b"credentials creds auth authorization cookie cookies session bearer jwt".split()
)
"""A name with one of these as a word (`OPENAI_API_KEY`, `authToken`, `db-password`)
is key-like; `max_tokens`, `tokenizer` and `author` are not."""
_COMPOUNDS = (
    b"apikey",
    b"accesskey",
    b"secretkey",
    b"privatekey",
    b"token",
    b"secret",
    b"password",
    b"passwd",
    b"credential",
    b"credentials",
)
"""Word endings that make a word key-like on their own: `PGPASSWORD`, `authtoken`."""
NOT_SECRET_LAST_WORDS = frozenset(
    b"id ids name names file files path paths dir url uri endpoint host type kind method "
    b"mode length len size count limit max min version format env var header prefix field "
    b"enabled required provider source scope ttl expiry expires expiration timeout index "
    b"usage hash algorithm alg policy label description help".split()
)
"""A key-like name ending in one of these names something about a key, not the key:
`api_key_name`, `token_file`, `secret_env`, `session_id`."""
IDENTIFIER_NAMES = frozenset(
    b"id ids uuid guid name names hash digest sha sha1 sha256 sha512 md5 checksum etag "
    b"signature commit ref branch tag version model image path file dir url uri href src "
    b"trial task job dataset run revision".split()
)
"""For the rule that takes any name: names whose random-looking values are identifiers
(`"id": "msg_01XFDUDYJgAACzvnptvVoYEL"`, `"signature": "…"`, `"model": "…"`)."""
ID_PREFIXES = (
    b"msg_", b"toolu_", b"srvtoolu_", b"chatcmpl-", b"call_", b"req_", b"resp_", b"run_",
    b"file-", b"file_", b"asst_", b"thread_", b"batch_", b"sha256:", b"sha512:", b"sha256-",
    b"sha512-", b"sha1-", b"git+",
)  # fmt: skip
"""Prefixes of the ids model APIs and package managers print, which look random."""


def entropy(value: bytes) -> float:
    """Shannon entropy in bits per character, as gitleaks computes it:
    log2(size) - sum(n log2 n) / size, over the count n of each distinct byte."""
    size = len(value)
    if size == 0:
        return 0.0
    total = 0.0
    for byte in set(value):
        n = value.count(byte)  # one C loop per distinct byte, not a Python step per byte
        total += n * math.log2(n)
    return math.log2(size) - total / size


def _without(kept: bytes) -> bytes:
    """The bytes not in `kept`, for `bytes.translate(None, …)` to delete."""
    return bytes(sorted(set(range(256)) - set(kept)))


_NOT_DIGITS = _without(b"0123456789")
_NOT_UPPER = _without(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NOT_LOWER = _without(b"abcdefghijklmnopqrstuvwxyz")


def stands_for_a_secret(value: bytes) -> bool:
    """`${VAR}`, `<password>`, `[REDACTED]`, `Bearer [REDACTED]`, `********`, `xxxx`, `null`:
    not the secret."""
    stripped = value.strip()
    if not stripped or stripped.startswith(_PLACEHOLDER_STARTS):
        return True
    if _REDACTED_AFTER_A_WORD.fullmatch(stripped):
        return True
    lowered = stripped.lower()
    if len(set(lowered)) <= 1 or lowered in _PLACEHOLDER_WORDS:
        return True
    return lowered.startswith((b"your-", b"your_", b"my-", b"my_")) and lowered.endswith(
        (b"key", b"token", b"secret", b"password", b"here")
    )


def words(name: bytes) -> list[bytes]:
    """`OPENAI_API_KEY`, `apiKey`, `x-api-key`, `openai.api_key` -> lower-case words."""
    return [w.lower() for w in _SEGMENT.findall(name)]


_AMBIGUOUS_ALONE = frozenset((b"key", b"keys", b"session", b"auth"))
"""Names that, alone, are as often a dict key, a keyboard key or a session object as a
credential (`key="nvidia.com/gpu"`, `session: TmuxSession`): key-like only with another
word (`api_key`, `session_token`)."""


def is_key_like(name: bytes) -> bool:
    parts = [p for p in words(name) if p not in (b"self", b"this")]
    if not parts or parts[-1] in NOT_SECRET_LAST_WORDS:
        return False
    if len(parts) == 1 and parts[0] in _AMBIGUOUS_ALONE:
        return False
    return any(p in KEY_WORDS or p.endswith(_COMPOUNDS) for p in parts)


def holds_identifiers(name: bytes) -> bool:
    parts = words(name)
    return not parts or parts[-1] in IDENTIFIER_NAMES


def looks_random(value: bytes, *, min_length: int, max_length: int, threshold: float) -> bool:
    """Capital and small letters and digits, of a key's length, entropy over the threshold."""
    if (
        not min_length <= len(value) <= (max_length or len(value))
        or value.startswith(ID_PREFIXES)
        or b"://" in value
    ):
        return False
    if value.startswith((b"/", b"./", b"~/")) or not _has_every_class(value):
        return False
    return entropy(value) > threshold


def _has_every_class(value: bytes) -> bool:
    return all(value.translate(None, others) for others in (_NOT_DIGITS, _NOT_UPPER, _NOT_LOWER))


def _has_digit(value: bytes) -> bool:
    return bool(value.translate(None, _NOT_DIGITS))


_PASSWORD_WORDS = frozenset((b"password", b"passwd", b"pwd", b"passphrase"))
_WORD_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.- "
_IDENTIFIER_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."


def is_password_name(name: bytes) -> bool:
    return any(w in _PASSWORD_WORDS or w.endswith((b"password", b"passwd")) for w in words(name))


def is_prose(value: bytes) -> bool:
    """Two spaces or more: a sentence (a help text, a description), not a key."""
    return value.count(b" ") >= 2


def is_words(value: bytes) -> bool:
    """Letters, `_`, `.`, `-` and spaces only: words, such as `registry-datasets-hint`.
    A key holds a digit or another sign (gitleaks' generic rule allows these too); a
    password may be words, so password names are not asked this."""
    return not value.rstrip(b"=").translate(None, _WORD_BYTES)


def looks_like_code(
    name: bytes, value: bytes, *, quoted: bool, separator: bytes, after: bytes
) -> bool:
    """`api_key=self.api_key`, `hash_key = hashlib.sha256(…)`, `token=token`: code that
    names a key without holding one. An unquoted value followed by `(` is a call; after
    `=` and a name with small letters, an identifier without a digit, or a dotted one."""
    if quoted:
        return False
    if after == b"(":
        return True
    if separator == b":" or name.upper() == name:
        return False
    if value.translate(None, _IDENTIFIER_BYTES):
        return False
    return b"." in value or not _has_digit(value)

"""Redaction: values in a job's text files that look like keys become `[REDACTED]`.

Each pattern in `PATTERNS` finds one kind of secret (a provider's API key, a
GitHub token, a private key block, a `*_API_KEY=` assignment, …) and names the
part to replace; a key's name and the text around it stay. Values that only
stand for a secret (`${VAR}` templates, `<placeholders>`, `[REDACTED]` itself,
short or empty values) are kept, so redacting twice changes nothing.
`docs/redaction.md` lists every pattern with an example.

The service redacts after checking the manifest: the manifest seals the bytes
the harness wrote, so it is checked against them, and only then are the stored
copies edited. Text is matched as UTF-8 bytes; a file that is not valid UTF-8
is left as it is.

Speed: every pattern's regex starts with a literal (`sk-`, `token`, …), which
Python's `re` finds at memory speed; a regex without one would scan several
times slower. Case-insensitive patterns run on a lower-cased copy of the text,
whose byte offsets are the original's.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hbench.jobs.tree import scan

REDACTED = "[REDACTED]"
_REDACTED = REDACTED.encode()

READ_CHUNK = 1 << 20
OVERLAP = 32 * 1024
"""Bytes held back between chunks: longer than any match (a private key block is capped
at 16 KiB), so a secret split across two reads is still seen whole."""
CONTEXT = 1024
"""Bytes kept before each chunk so a match can look back at the name it belongs to."""

_TOKEN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NAME_CHARS = _TOKEN_CHARS | frozenset(b".")
_DIGITS = frozenset(b"0123456789")
_MIN_ASSIGNED = 8
"""Shorter assigned values are kept: `TOKEN=abc` and `eos_token: </s>` are samples and
tokenizer settings far more often than secrets."""
_PLACEHOLDER_STARTS = (b"$", b"{{", b"<", b"[", b"%(", b"%{", b"#{", b"-----BEGIN")
_PLACEHOLDER_WORDS = frozenset({b"none", b"null", b"true", b"false", b"undefined"})
_EDGES = re.compile(rb"((?:\s|\\[nr])*)(.*?)((?:\s|\\[nr])*)", re.DOTALL)

Span = tuple[int, int]


@dataclass(frozen=True)
class Pattern:
    """One kind of secret: where it is, and what part of a match is the secret."""

    name: str
    regex: re.Pattern[bytes]
    """Starts with a literal. The group `secret` (or, for assignments, `v1` to `v4`) is
    replaced; a regex without such a group replaces its whole match."""
    lowered: bool = False
    """Match against the lower-cased text: the pattern is case-insensitive."""
    token: bool = False
    """A token with a known prefix: it must not continue a longer word on either side."""
    random: bool = False
    """The secret must hold a digit, or both capital and small letters: a key is random,
    while words joined by dashes (`sk-learn-pipeline`) are not."""
    assignment: bool = False
    """A `name = value` form: placeholders are kept and the name must stand alone."""
    trim_edges: bool = False
    """Keep line breaks (real or `\\n`-escaped) around the secret, as in a key block."""
    placeholders: bool = False
    """Keep values that stand for a secret (`${VAR}`, `<password>`, `[REDACTED]`)."""


def _rx(pattern: bytes) -> re.Pattern[bytes]:
    return re.compile(pattern)


_Q = rb"""\\?["']?"""  # an optional quote, maybe backslash-escaped inside a JSON string
_VALUE = (
    rb"""(?:\\"(?P<v1>[^"\\\r\n]{1,4096})\\\""""
    rb"""|"(?P<v2>[^"\\\r\n]{1,4096})\""""
    rb"""|'(?P<v3>[^'\\\r\n]{1,4096})'"""
    rb"""|(?P<v4>[^\s"'`\\,;&|<>(){}\[\]=][^\s"'`\\,;&|<>(){}\[\]]{0,4095}))"""
)
_ASSIGN = rb"(?P<nq>" + _Q + rb")[ \t]*(?P<sep>:=|=>|[:=])[ \t]*" + _VALUE


def _assignment(name: str, keyword: bytes) -> Pattern:
    return Pattern(name, _rx(keyword + _ASSIGN), lowered=True, assignment=True)


PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "private-key-block",
        _rx(
            rb"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            rb"(?P<secret>(?:(?!-----END)[A-Za-z0-9+/=\s\\:,.-]){16,16384})"
        ),
        trim_edges=True,
    ),
    Pattern("anthropic-api-key", _rx(rb"sk-ant-[A-Za-z0-9_-]{20,512}"), token=True),
    Pattern("openrouter-api-key", _rx(rb"sk-or-[A-Za-z0-9_-]{20,512}"), token=True),
    Pattern("openai-api-key", _rx(rb"sk-[A-Za-z0-9_-]{20,512}"), token=True, random=True),
    Pattern("google-api-key", _rx(rb"AIza[A-Za-z0-9_-]{35}"), token=True),
    Pattern("google-oauth-token", _rx(rb"ya29\.[A-Za-z0-9_-]{20,2048}"), token=True),
    Pattern("groq-api-key", _rx(rb"gsk_[A-Za-z0-9]{20,512}"), token=True),
    Pattern("xai-api-key", _rx(rb"xai-[A-Za-z0-9]{20,512}"), token=True, random=True),
    Pattern("huggingface-token", _rx(rb"hf_[A-Za-z0-9]{30,512}"), token=True, random=True),
    Pattern("perplexity-api-key", _rx(rb"pplx-[A-Za-z0-9]{32,512}"), token=True),
    Pattern("replicate-api-token", _rx(rb"r8_[A-Za-z0-9]{30,512}"), token=True),
    Pattern("nvidia-api-key", _rx(rb"nvapi-[A-Za-z0-9_-]{40,512}"), token=True),
    Pattern("langsmith-api-key", _rx(rb"lsv2_[a-z]{2}_[A-Za-z0-9_]{20,512}"), token=True),
    Pattern("daytona-api-key", _rx(rb"dtn_[A-Za-z0-9]{20,512}"), token=True, random=True),
    Pattern("e2b-api-key", _rx(rb"e2b_[A-Za-z0-9]{20,512}"), token=True, random=True),
    Pattern("modal-token", _rx(rb"a[ks]-[A-Za-z0-9]{20,512}"), token=True, random=True),
    Pattern("github-token", _rx(rb"gh[pousr]_[A-Za-z0-9]{36,255}"), token=True),
    Pattern("github-fine-grained-token", _rx(rb"github_pat_[A-Za-z0-9_]{22,255}"), token=True),
    Pattern("hbench-token", _rx(rb"hp[gr]_[A-Za-z0-9_-]{20,512}"), token=True),
    Pattern("slack-token", _rx(rb"xox[abposr]-[A-Za-z0-9-]{10,512}"), token=True, random=True),
    Pattern("aws-access-key-id", _rx(rb"(?:AKIA|ASIA)[A-Z0-9]{16}"), token=True),
    Pattern(
        "jwt",
        _rx(rb"eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}"),
        token=True,
    ),
    Pattern(
        "authorization-header",
        _rx(
            rb"authorization"
            + _Q
            + rb"[ \t]*[:=][ \t]*"
            + _Q
            + rb"(?:bearer|token|basic|bot|apikey)[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{8,4096})"
        ),
        lowered=True,
    ),
    Pattern(
        "bearer-token",
        _rx(rb"bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{20,4096}=*)"),
        lowered=True,
        random=True,
    ),
    Pattern(
        "url-password",
        _rx(rb"://[^\s:/@\"'<>]{1,256}:(?P<secret>[^\s:/@\"'<>]{1,256})@"),
        placeholders=True,
    ),
    _assignment("api-key-assignment", rb"api[_-]?key"),
    _assignment("token-assignment", rb"token"),
    _assignment("secret-assignment", rb"secret(?:[_-]?access)?(?:[_-]?key)?"),
    _assignment("password-assignment", rb"passw(?:or)?d"),
    _assignment("private-key-assignment", rb"private[_-]?key"),
)
"""Every pattern, most specific first: where two find the same secret, the first names it."""


@dataclass(frozen=True)
class Redacted:
    """Text with its secrets replaced, and how many were replaced."""

    text: str
    count: int


def redact_text(text: str) -> Redacted:
    """Replace every key-like value in `text` with `[REDACTED]`."""
    stream = RedactingStream()
    data = stream.feed(text.encode("utf-8")) + stream.finish()
    return Redacted(data.decode("utf-8"), stream.count)


def find_secrets(data: bytes) -> list[tuple[str, Span]]:
    """Every secret in `data`: the name of the pattern that found it and its byte span."""
    return [(PATTERNS[i].name, span) for span, i in _secrets(data, data.lower(), 0)]


class RedactingStream:
    """Redacts bytes fed in chunks, holding back enough to see a secret split across two."""

    def __init__(self) -> None:
        self.count = 0
        self._context = b""
        self._pending = bytearray()

    def feed(self, data: bytes) -> bytes:
        """Take more bytes; return the redacted bytes that are now final (maybe none)."""
        self._pending += data
        if len(self._pending) < 2 * OVERLAP:
            return b""
        return self._redact(final=False)

    def finish(self) -> bytes:
        """The rest of the redacted bytes, once the input has ended."""
        return self._redact(final=True)

    def _redact(self, *, final: bool) -> bytes:
        window = self._context + self._pending
        base = len(self._context)
        limit = len(window) if final else len(window) - OVERLAP
        spans = [span for span, _ in _secrets(window, window.lower(), base) if span[0] < limit]
        boundary = max([limit, *(end for _, end in spans)])
        parts: list[bytes] = []
        pos = base
        for start, end in spans:
            parts += (window[pos:start], _REDACTED)
            pos = end
        parts.append(window[pos:boundary])
        self.count += len(spans)
        self._context = window[max(0, boundary - CONTEXT) : boundary]
        self._pending = bytearray(window[boundary:])
        return b"".join(parts)


def redact_folder(root: Path, paths: Iterable[str] | None = None) -> dict[str, int]:
    """Redact the text files below `root` in place; return {path: replacements} where any were made.

    `paths` are POSIX paths below `root` (such as an extracted archive's file list);
    by default every regular file. A file is rewritten, atomically, only when
    something in it changes; files that are not UTF-8 text are left alone.
    """
    chosen = sorted(paths) if paths is not None else [e.path for e in scan(root).files]
    counts: dict[str, int] = {}
    for rel in chosen:
        count = redact_file(root / rel)
        if count:
            counts[rel] = count
    return counts


def redact_file(path: Path) -> int:
    """Redact one file in place, reading it in bounded chunks; return the replacements made.

    The first pass only counts (most files hold no secret, and a file proves not to
    be text only when a byte fails to decode); the second writes a copy beside the
    file and renames it over the original.
    """
    count = _count_in_text_file(path)
    if count:
        _rewrite(path)
    return count


def _count_in_text_file(path: Path) -> int:
    stream = RedactingStream()
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for chunk in _read_chunks(path):
            decoder.decode(chunk)
            stream.feed(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return 0
    stream.finish()
    return stream.count


def _rewrite(path: Path) -> None:
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    # mkstemp: a fresh name (O_EXCL, O_NOFOLLOW), so no file of the job is in the way.
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".redacting", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            stream = RedactingStream()
            for chunk in _read_chunks(path):
                out.write(stream.feed(chunk))
            out.write(stream.finish())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read_chunks(path: Path) -> Iterable[bytes]:
    # O_NOFOLLOW: a job folder holds no links, and a redactor must never write through one.
    # O_NONBLOCK: opening a named pipe would otherwise wait for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb", buffering=0) as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        while chunk := stream.read(READ_CHUNK):
            yield chunk


def _secrets(text: bytes, lowered: bytes, skip_before: int) -> list[tuple[Span, int]]:
    """The secrets to replace, in order and not overlapping, with their pattern's index."""
    found: list[tuple[int, int, int, int]] = []
    for index, pattern in enumerate(PATTERNS):
        subject = lowered if pattern.lowered else text
        for match in pattern.regex.finditer(subject):
            span = _secret_span(pattern, match, text)
            if span is not None and span[0] >= skip_before:
                found.append((span[0], span[0] - span[1], index, span[1]))
    found.sort()
    chosen: list[tuple[Span, int]] = []
    last_end = -1
    for start, _, index, end in found:
        if start >= last_end:
            chosen.append(((start, end), index))
            last_end = end
    return chosen


def _secret_span(pattern: Pattern, match: re.Match[bytes], text: bytes) -> Span | None:
    if pattern.assignment:
        return _assigned_value(match, text)
    group = "secret" if "secret" in pattern.regex.groupindex else 0
    start, end = match.span(group)
    if pattern.token and (_continues(text, start - 1) or _continues(text, end)):
        return None
    if pattern.random and not _looks_random(text[start:end]):
        return None
    if pattern.placeholders and _stands_for_a_secret(text[start:end]):
        return None
    if pattern.trim_edges:
        edges = _EDGES.fullmatch(text, start, end)
        assert edges is not None  # noqa: S101 - the regex matches any text
        start, end = edges.span(2)
    return (start, end)


def _continues(text: bytes, index: int) -> bool:
    return 0 <= index < len(text) and text[index] in _TOKEN_CHARS


def _looks_random(value: bytes) -> bool:
    if not _DIGITS.isdisjoint(value):
        return True
    return value.lower() != value and value.upper() != value


def _assigned_value(match: re.Match[bytes], text: bytes) -> Span | None:
    """The value of `name = value` or `"name": "value"`, unless it only stands for a secret."""
    group = next(g for g in ("v1", "v2", "v3", "v4") if match.start(g) >= 0)
    start, end = match.span(group)
    value = text[start:end]
    name_start = _name_start(text, match.start())
    if name_start is None or _is_placeholder(value):
        return None
    name = text[name_start : match.start("nq")]
    quoted_name = bool(match.group("nq")) or (name_start > 0 and text[name_start - 1] in b"\"'")
    separator = match.group("sep")
    if separator == b":" and not (quoted_name or _at_line_start(text, name_start)):
        # "name: value" counts only as a YAML key or a header line, not in prose
        # ("invalid token: expected a string").
        return None
    if group == "v4" and separator != b":" and name.upper() != name and _DIGITS.isdisjoint(value):
        # Code, not configuration: `api_key=self.api_key`, `token=token`.
        return None
    return (start, end)


def _name_start(text: bytes, keyword_start: int) -> int | None:
    """Where the identifier ending in the keyword begins, or None if it is implausibly long."""
    start = keyword_start
    floor = max(0, keyword_start - 128)
    while start > floor and text[start - 1] in _NAME_CHARS:
        start -= 1
    if start == floor and floor > 0 and text[start - 1] in _NAME_CHARS:
        return None
    if start > 0 and text[start - 1] == 0x5C and text[start : start + 1] in (b"n", b"r", b"t"):
        start += 1  # `\nGITHUB_TOKEN=` in a JSON string: the name starts after the escape
    return start


def _at_line_start(text: bytes, index: int) -> bool:
    line_start = text.rfind(b"\n", 0, index) + 1
    return not text[line_start:index].strip(b" \t-#")


def _is_placeholder(value: bytes) -> bool:
    return len(value) < _MIN_ASSIGNED or _stands_for_a_secret(value)


def _stands_for_a_secret(value: bytes) -> bool:
    """`${VAR}`, `<password>`, `[REDACTED]`, `********`, `null`: a value that is not the secret."""
    if value.startswith(_PLACEHOLDER_STARTS):
        return True
    return len(set(value)) == 1 or value.lower() in _PLACEHOLDER_WORDS

"""Redaction: values in a job's text files that look like keys become `[REDACTED]`.

The rules are gitleaks' default rules, vendored, and a few of our own
(`app/uploads/rules/`, read by `app.uploads.redaction.patterns`); the scanner
(`app.uploads.redaction.engine`) runs them all in one linear-time pass. Each rule names
the part of its match that is the secret, so a key's name and the text around it stay.
Values that only stand for a secret (`${VAR}` templates, `<placeholders>`, `[REDACTED]`
itself) are kept, so redacting twice changes nothing. `docs/redaction.md` says what is
replaced and how the rule set is updated.

The service redacts after checking the manifest: the manifest seals the bytes the
harness wrote, so it is checked against them, and only then are the stored copies
edited. Text is matched as bytes; a file that is not valid UTF-8 is left as it is.

Checking a match costs microseconds, so a job of nothing but keys would cost minutes: a
folder's redaction may be given a most it replaces, and stops as soon as it is passed.
"""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hbench.errors import HbenchError
from hbench.jobs.tree import scan

from .redaction.engine import REACH, Finding, default_engine
from .redaction.patterns import Pattern, default_patterns

REDACTED = "[REDACTED]"
_REDACTED = REDACTED.encode()

READ_CHUNK = 1 << 20
OVERLAP = 32 * 1024
"""Bytes held back between chunks: longer than any match the engine finds whole
(`REACH`), so a secret split across two reads is still seen whole."""
CONTEXT = 1024
"""Bytes kept before each chunk so a match can look back at the name it belongs to."""
assert REACH < OVERLAP  # noqa: S101 - a module invariant, checked once on import

Span = tuple[int, int]


def rules() -> tuple[Pattern, ...]:
    """Every rule in use, in the order that names a secret two rules find."""
    return default_patterns().rules


@dataclass(frozen=True)
class Redacted:
    """Text with its secrets replaced, how many were replaced, and by which rules."""

    text: str
    count: int
    rules: Mapping[str, int] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class FolderRedactions:
    """What redacting a folder replaced: per file, and per file and rule."""

    files: dict[str, int]
    """{path: values replaced}, for the files where any were."""
    rules: dict[str, dict[str, int]]
    """{path: {rule id: values replaced}}, the same files."""

    def rule_totals(self) -> dict[str, int]:
        """{rule id: values replaced} over every file, by rule id."""
        totals: Counter[str] = Counter()
        for counts in self.rules.values():
            totals.update(counts)
        return dict(sorted(totals.items()))


def redact_text(text: str) -> Redacted:
    """Replace every key-like value in `text` with `[REDACTED]`."""
    stream = RedactingStream()
    data = stream.feed(text.encode("utf-8")) + stream.finish()
    return Redacted(data.decode("utf-8"), stream.count, dict(stream.rules))


def find_secrets(data: bytes, path: str | None = None) -> list[tuple[str, Span]]:
    """Every secret in `data`: the id of the rule that found it and its byte span.

    `path` is the file's path, for the rules that apply to some files only."""
    return [(f.rule, (f.start, f.end)) for f in default_engine().find(data, path=path)]


class RedactingStream:
    """Redacts bytes fed in chunks, holding back enough to see a secret split across two."""

    def __init__(self, path: str | None = None) -> None:
        self.count = 0
        self.rules: Counter[str] = Counter()
        self._path = path
        self._context = b""
        self._pending = bytearray()
        self._starts: dict[int, int] = {}

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
        scan = default_engine().scan(
            window, skip_before=base, path=self._path, limit=limit, starts=self._starts
        )
        spans: list[Finding] = [f for f in scan.findings if f.start < limit]
        boundary = max([limit, *(f.end for f in spans)])
        parts: list[bytes] = []
        pos = base
        for finding in spans:
            parts += (window[pos : finding.start], _REDACTED)
            pos = finding.end
        parts.append(window[pos:boundary])
        self.count += len(spans)
        self.rules.update(f.rule for f in spans)
        shift = max(0, boundary - CONTEXT)
        self._context = window[shift:boundary]
        self._pending = bytearray(window[boundary:])
        # Each rule goes on where it would in one search of the whole text.
        self._starts = {rule: pos - shift for rule, pos in scan.resume.items() if pos > shift}
        return b"".join(parts)


def redact_folder(
    root: Path, paths: Iterable[str] | None = None, *, max_values: int | None = None
) -> dict[str, int]:
    """Redact the text files below `root` in place; return {path: replacements} where any were made.

    `paths` are POSIX paths below `root` (such as an extracted archive's file list);
    by default every regular file. A file is rewritten, atomically, only when
    something in it changes; files that are not UTF-8 text are left alone. Past
    `max_values`, `upload-too-many-secrets` (`redact_folder_by_rule`).
    """
    return redact_folder_by_rule(root, paths, max_values=max_values).files


def redact_folder_by_rule(
    root: Path, paths: Iterable[str] | None = None, *, max_values: int | None = None
) -> FolderRedactions:
    """As `redact_folder`, and which rules made the replacements in each file.

    With `max_values`, raise `upload-too-many-secrets` as soon as the values found pass
    it: checked after each chunk read, before the file holding it is rewritten. Values
    found in a file that then proves not to be text count too: finding them is the cost.
    """
    chosen = sorted(paths) if paths is not None else [e.path for e in scan(root).files]
    budget = _Budget(max_values)
    files: dict[str, int] = {}
    by_rule: dict[str, dict[str, int]] = {}
    for rel in chosen:
        counts = _redact_file(root / rel, rel, budget)
        if counts:
            files[rel] = sum(counts.values())
            by_rule[rel] = dict(sorted(counts.items()))
    return FolderRedactions(files, by_rule)


@dataclass
class _Budget:
    """The values a folder's redaction may still find, and the refusal once they run out."""

    limit: int | None
    spent: int = 0

    def check(self, found: int, path: str) -> None:
        """Refuse if `found` more values (in `path`, so far) pass the limit."""
        if self.limit is not None and self.spent + found > self.limit:
            raise too_many_secrets(self.limit, path)

    def spend(self, found: int) -> None:
        self.spent += found


def too_many_secrets(limit: int, path: str) -> HbenchError:
    return HbenchError(
        "upload-too-many-secrets",
        f"the job holds more than {limit:,} key-like values to replace with {REDACTED} (the "
        f"count passed {limit:,} in {path}), the most one upload's redaction replaces: each "
        "costs time to check, and a job made of keys would hold the service for minutes. "
        "Keep keys out of the job's files: pass them to Harbor as templates "
        '("${OPENAI_API_KEY}"), stop the agent printing them (an environment dumped in a '
        "loop), then run the benchmark again",
        path=path,
    )


def redact_file(path: Path) -> int:
    """Redact one file in place, reading it in bounded chunks; return the replacements made.

    The first pass only counts (most files hold no secret, and a file proves not to
    be text only when a byte fails to decode); the second writes a copy beside the
    file and renames it over the original.
    """
    return sum(_redact_file(path, str(path), _Budget(None)).values())


def _redact_file(path: Path, name: str, budget: _Budget) -> Counter[str]:
    counts = _count_in_text_file(path, name, budget)
    if counts:
        _rewrite(path, name)
    return counts


def _count_in_text_file(path: Path, name: str, budget: _Budget) -> Counter[str]:
    stream = RedactingStream(name)
    decoder = codecs.getincrementaldecoder("utf-8")()
    text = True
    try:
        for chunk in _read_chunks(path):
            decoder.decode(chunk)
            stream.feed(chunk)
            budget.check(stream.count, name)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        text = False
    if text:
        stream.finish()
    budget.check(stream.count, name)
    budget.spend(stream.count)
    return stream.rules if text else Counter()


def _rewrite(path: Path, name: str) -> None:
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    # mkstemp: a fresh name (O_EXCL, O_NOFOLLOW), so no file of the job is in the way.
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".redacting", dir=path.parent)
    tmp = Path(temporary)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            stream = RedactingStream(name)
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

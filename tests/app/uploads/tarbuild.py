"""Writing tar archives byte by byte, hostile ones included, for the archive reader's tests.

`tarfile` refuses to write some of what an attacker can send (a bad checksum, a
GNU long name after a PAX header, a PAX size that disagrees with the header), so
the tests build headers themselves. `test_archive.py` checks that what this
writes is what `tarfile` reads.
"""

from __future__ import annotations

import gzip
from typing import Any

BLOCK = 512
POSIX_MAGIC = b"ustar\x0000"
GNU_MAGIC = b"ustar  \x00"


def _bytes(text: str | bytes) -> bytes:
    return text.encode() if isinstance(text, str) else text


def header(
    name: str | bytes,
    *,
    size: int = 0,
    typeflag: bytes = b"0",
    linkname: str | bytes = b"",
    prefix: str | bytes = b"",
    magic: bytes = POSIX_MAGIC,
    mode: int = 0o644,
    checksum_delta: int = 0,
) -> bytes:
    """One 512-byte header with a correct checksum (unless `checksum_delta` spoils it)."""
    block = bytearray(BLOCK)
    fields = [
        (0, 100, _bytes(name)),
        (100, 8, b"%07o\x00" % mode),
        (108, 8, b"0000000\x00"),
        (116, 8, b"0000000\x00"),
        (124, 12, b"%011o\x00" % size),
        (136, 12, b"%011o\x00" % 0),
        (156, 1, typeflag),
        (157, 100, _bytes(linkname)),
        (257, 8, magic),
        (345, 155, _bytes(prefix)),
    ]
    for offset, width, value in fields:
        assert len(value) <= width, (value, width)
        block[offset : offset + len(value)] = value
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\x00 " % (sum(block) + checksum_delta)
    return bytes(block)


def padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % BLOCK)


def member(name: str | bytes, data: bytes = b"", typeflag: bytes = b"0", **fields: Any) -> bytes:
    """A header and its data, padded to whole blocks."""
    return header(name, size=len(data), typeflag=typeflag, **fields) + padded(data)


def pax_records(records: dict[str, str | bytes]) -> bytes:
    out = b""
    for key, value in records.items():
        body = b" " + key.encode() + b"=" + _bytes(value) + b"\n"
        length = len(body) + 1
        while len(str(length)) + len(body) != length:
            length += 1
        out += str(length).encode() + body
    return out


def pax(records: dict[str, str | bytes], typeflag: bytes = b"x") -> bytes:
    """A PAX extended (`x`) or global (`g`) header for what follows."""
    return member("././@PaxHeader", pax_records(records), typeflag=typeflag)


def gnu_long_name(name: str | bytes, typeflag: bytes = b"L") -> bytes:
    """GNU's `././@LongLink` member that names the next member (or, with `K`, its link target)."""
    return member("././@LongLink", _bytes(name) + b"\x00", typeflag=typeflag, magic=GNU_MAGIC)


def end(record: bool = True) -> bytes:
    """The two zero blocks that end an archive, padded to a 10 KiB record as tar does."""
    return bytes(20 * BLOCK) if record else bytes(2 * BLOCK)


def tar(*members: bytes, record: bool = True) -> bytes:
    return b"".join(members) + end(record)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)

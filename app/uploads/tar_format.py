"""tar's on-disk format, parsed by hand: 512-byte headers and PAX records in, typed fields out.

Pure functions, no I/O. The archive reader (`app.uploads.archive`) drives them over
a decompressed stream; parsing here rather than through `tarfile` lets it bound
memory, apply its caps before a member's data is read, and refuse anything it
does not model. Formats follow POSIX.1-2001 (ustar and pax) and GNU tar's
extensions (`info tar`, "Standard" and "GNU tar format"); any header that fits
none of them is refused as `archive-malformed`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from hbench.errors import HbenchError

BLOCK = 512
ZERO_BLOCK = bytes(BLOCK)

_POSIX_MAGIC = b"ustar\x00"  # followed by the version "00"
_GNU_MAGIC = b"ustar  \x00"  # magic and version run together in GNU's own format
_OCTAL = re.compile(rb"[0-7]+")
_PAX_LENGTH = re.compile(rb"([1-9][0-9]{0,8}) ")


class Kind(Enum):
    """What a header introduces, grouped by how the reader treats it."""

    FILE = "a regular file"
    DIR = "a folder"
    HARD_LINK = "a hard link"
    SYMLINK = "a symbolic link"
    CHAR_DEVICE = "a character device"
    BLOCK_DEVICE = "a block device"
    FIFO = "a named pipe (FIFO)"
    SPARSE = "a GNU sparse file"
    PAX = "a PAX extended header"
    GLOBAL_PAX = "a PAX global header"
    LONG_NAME = "a GNU long name"
    LONG_LINK = "a GNU long link target"
    OTHER = "a member of a type job archives never hold"


_KINDS: dict[bytes, Kind] = {
    b"0": Kind.FILE,
    b"\x00": Kind.FILE,  # pre-POSIX "AREGTYPE"
    b"7": Kind.FILE,  # "contiguous file": GNU tar and Python extract it as a regular file
    b"5": Kind.DIR,
    b"1": Kind.HARD_LINK,
    b"2": Kind.SYMLINK,
    b"3": Kind.CHAR_DEVICE,
    b"4": Kind.BLOCK_DEVICE,
    b"6": Kind.FIFO,
    b"S": Kind.SPARSE,
    b"x": Kind.PAX,
    b"g": Kind.GLOBAL_PAX,
    b"L": Kind.LONG_NAME,
    b"K": Kind.LONG_LINK,
}

LINK_KINDS = frozenset({Kind.HARD_LINK, Kind.SYMLINK, Kind.LONG_LINK})
SPECIAL_KINDS = frozenset({Kind.CHAR_DEVICE, Kind.BLOCK_DEVICE, Kind.FIFO, Kind.SPARSE, Kind.OTHER})
META_KINDS = frozenset({Kind.PAX, Kind.GLOBAL_PAX, Kind.LONG_NAME})


@dataclass(frozen=True, slots=True)
class Header:
    """One header block: the member's raw name (ustar prefix joined), kind and data size."""

    name: bytes
    kind: Kind
    typeflag: bytes
    size: int


def malformed(reason: str) -> HbenchError:
    return HbenchError(
        "archive-malformed",
        f"the archive is not a well-formed tar: {reason}; pack the job with "
        "`hbench jobs pack` or `tar czf job.tgz -C jobs <job-name>`",
    )


def parse_header(block: bytes) -> Header:
    """Parse one 512-byte header block that is not all zeros.

    Raises `archive-malformed` for a bad checksum, an unknown magic or a bad number.
    """
    _check_checksum(block)
    magic = block[257:265]
    name = _cstring(block[0:100])
    if magic[:6] == _POSIX_MAGIC:
        # ustar splits long names in two; GNU's own format uses the same bytes for
        # access and change times instead, so only a POSIX header has a prefix.
        prefix = _cstring(block[345:500])
        if prefix:
            name = prefix + b"/" + name
    elif magic != _GNU_MAGIC:
        raise malformed("a header has no ustar or GNU magic (pre-POSIX tar is not taken)")
    typeflag = block[156:157]
    kind = _KINDS.get(typeflag, Kind.OTHER)
    size = parse_number(block[124:136], "size")
    return Header(name=name, kind=kind, typeflag=typeflag, size=size)


def parse_number(field: bytes, what: str) -> int:
    """A numeric header field: octal text, or GNU's base-256 form for large values."""
    if field[:1] and field[0] & 0x80:
        if field[0] != 0x80:
            # 0xff starts a negative base-256 number; nothing in a job is negative.
            raise malformed(f"the {what} field of a header is negative or out of range")
        return int.from_bytes(field[1:], "big")
    text = _cstring(field).strip(b" ")
    if not text:
        return 0
    if _OCTAL.fullmatch(text) is None:
        raise malformed(f"the {what} field of a header is not an octal number")
    return int(text, 8)


def parse_pax(data: bytes) -> dict[str, bytes]:
    """The records of a PAX extended header: `"<length> <key>=<value>\\n"`, repeated.

    Values stay bytes: `hdrcharset=BINARY` and vendor keys may carry bytes that are
    not UTF-8, and the reader decodes only the keys it uses. Later records win, as
    POSIX says. Trailing NUL padding is allowed; anything else malformed is refused.
    """
    records: dict[str, bytes] = {}
    pos, end = 0, len(data)
    while pos < end and data[pos] != 0:
        match = _PAX_LENGTH.match(data, pos)
        if match is None:
            raise malformed("a PAX record does not start with its length")
        record_end = pos + int(match.group(1))
        if record_end > end or data[record_end - 1] != 0x0A:
            raise malformed("a PAX record's length does not match its text")
        key, sep, value = data[match.end() : record_end - 1].partition(b"=")
        if not sep or not key:
            raise malformed("a PAX record has no key=value")
        try:
            records[key.decode("utf-8")] = value
        except UnicodeDecodeError:
            raise malformed("a PAX record's key is not UTF-8") from None
        pos = record_end
    if data.count(0, pos) != end - pos:
        raise malformed("a PAX header has data after its records")
    return records


def padding(size: int) -> int:
    """Bytes of zero padding after `size` bytes of member data, up to the next block."""
    return -size % BLOCK


def _cstring(field: bytes) -> bytes:
    end = field.find(0)
    return field if end < 0 else field[:end]


def _check_checksum(block: bytes) -> None:
    stored = parse_number(block[148:156], "checksum")
    # The checksum is the sum of the header's bytes with its own field read as
    # spaces. Some old tars summed signed bytes; tar and Python accept both sums.
    field = block[148:156]
    unsigned = sum(block) - sum(field) + 8 * 0x20
    if stored == unsigned:
        return
    signed = (
        unsigned - 256 * sum(1 for b in block if b & 0x80) + 256 * sum(1 for b in field if b & 0x80)
    )
    if stored != signed:
        raise malformed("a header's checksum is wrong (the archive is damaged or not a tar)")

"""The upload reader's refusals: what failed, why, and the fix, ending with the rule code.

Codes and their fixes are documented in `docs/rule-codes.md`, "Upload archives".
"""

from __future__ import annotations

from app.uploads.tar_format import Kind
from hbench.errors import HbenchError
from hbench.limits import MIB


def not_gzip(why: str) -> HbenchError:
    return HbenchError(
        "upload-not-gzip",
        f"the upload is not a gzip-compressed tar archive: {why}; send a .tar.gz made with "
        "`hbench jobs pack` or `tar czf job.tgz -C jobs <job-name>`",
    )


def too_large(max_sent: int) -> HbenchError:
    return HbenchError(
        "upload-too-large",
        f"the upload is over the {max_sent / MIB:.0f} MiB cap on what is sent; "
        "send a larger job in parts (`hbench jobs upload` does), up to its board's "
        "cap; past that, run fewer tasks per job",
    )


def truncated(why: str) -> HbenchError:
    return HbenchError(
        "upload-truncated",
        f"the upload is cut short: {why}; the transfer was interrupted or the archive "
        "was not completely written; pack the job again and re-send it",
    )


def trailing_data() -> HbenchError:
    return HbenchError(
        "upload-trailing-data",
        "the upload has data after the end of its archive (a second gzip stream or other "
        "bytes); send one .tar.gz made with `hbench jobs pack`",
    )


def unsafe_path(name: str, why: str) -> HbenchError:
    return HbenchError(
        "archive-unsafe-path",
        f"{name!r} {why}; a job archive holds only plain relative paths inside its job folder",
        path=name,
    )


def path_too_long(what: str) -> HbenchError:
    return HbenchError(
        "archive-path-too-long", f"{what}; shorten the names of the job's files and folders"
    )


def link(name: str, kind: Kind) -> HbenchError:
    return HbenchError(
        "archive-link",
        f"{name} is {kind.value}; a job archive holds only folders and regular files: "
        "replace the link with a copy of the file, then seal and pack the job again",
        path=name,
    )


def special_file(name: str, kind: Kind, typeflag: bytes) -> HbenchError:
    what = kind.value if kind is not Kind.OTHER else f"{kind.value} (type {typeflag!r})"
    return HbenchError(
        "archive-special-file",
        f"{name} is {what}; a job archive holds only folders and regular files: "
        "pack the job with `hbench jobs pack`",
        path=name,
    )


def duplicate_name(name: str, why: str) -> HbenchError:
    return HbenchError(
        "archive-duplicate-name",
        f"{name!r} {why}; each name may appear once: pack the job with `hbench jobs pack`",
        path=name,
    )


def too_many(what: str) -> HbenchError:
    return HbenchError(
        "upload-too-many-files",
        f"the archive holds {what}, over the cap for one job; run fewer tasks per job",
    )


def unpacked_too_large(cap: int, where: str) -> HbenchError:
    return HbenchError(
        "upload-unpacked-too-large",
        f"the archive unpacks to more than {cap / MIB:.0f} MiB {where}, over the cap its "
        "board allows (a board's `unpackedMaxBytes`, 512 MiB unless it says more): run fewer "
        "tasks per job",
    )


def empty(why: str) -> HbenchError:
    return HbenchError(
        "archive-empty",
        f"{why}; pack the job's own folder: `tar czf job.tgz -C jobs <job-name>`",
    )

"""Size limits on a job, shared by the client (which warns) and the service (which enforces),
and the service's default periods, which its settings and its site state alike.

The two byte caps come from the user documentation ("Upload a job": 95 MiB as
sent, 512 MiB unpacked): one request's, and a board's unless it sets its own. The
other numbers bound what one job folder may hold so the service can check an upload
in bounded time and memory; each is set well above what real Harbor jobs reach.
"""

from __future__ import annotations

from datetime import timedelta

MIB = 1024 * 1024


def size_text(count: int) -> str:
    """A byte count as an error message shows it: in MiB from one MiB, else in bytes."""
    return f"{count / MIB:.1f} MiB" if count >= MIB else f"{count:,} bytes"


UPLOAD_MAX_BYTES = 95 * MIB
"""The packed `.tar.gz` as sent. A full SWE-bench Verified job is 30 to 50 MiB."""

UNPACKED_MAX_BYTES = 512 * MIB
"""The sum of the sizes of the files in the archive, once unpacked."""

JOB_MAX_BYTES = 2048 * MIB
"""The most any board may allow a job as sent, in parts: the service's ceiling on a board's
`uploadMaxBytes` (`HBENCH_JOB_MAX_BYTES`)."""

JOB_UNPACKED_MAX_BYTES = 8192 * MIB
"""The most any board may allow a job once unpacked: the ceiling on a board's
`unpackedMaxBytes` (`HBENCH_JOB_UNPACKED_MAX_BYTES`)."""

PART_MIN_BYTES = MIB
"""The smallest part of an upload in parts, but for its last: smaller parts would cost a
request (and a row update) per few kilobytes."""

MAX_FILES = 100_000
"""Regular files in one job. A Harbor trial writes about 10 to 40 files, so this allows
500 tasks x 5 attempts with room to spare, while bounding the manifest the service reads."""

MAX_DEPTH = 32
"""Path components below the job folder. Harbor's deepest are about six
(`<trial>/artifacts/logs/artifacts/...`); agents' own logs add a few more."""

MAX_PATH_BYTES = 1024
"""A file's path below the job folder, in UTF-8 bytes: Linux's PATH_MAX is 4096, and
extracting under a prefix must stay below it."""

MAX_NAME_BYTES = 255
"""One path component in UTF-8 bytes: the NAME_MAX of ext4, APFS and most file systems."""

MANIFEST_MAX_BYTES = 32 * MIB
"""`manifest.json` itself: about 200 bytes per file, so MAX_FILES files need about 20 MiB.
The service reads the manifest into memory, so it must be bounded before parsing."""

RUN_TOKEN_LIFETIME = timedelta(hours=48)
"""How long an issued run's token may upload, by default (`HBENCH_RUN_TOKEN_LIFETIME`)."""

PUBLISH_WINDOW = timedelta(days=30)
"""How long after its upload a job may be published, by default (`HBENCH_PUBLISH_WINDOW`)."""

BUNDLE_MAX_BYTES = 256 * 1024
"""A Sigstore bundle beside a manifest (hbench/provenance.py): one is some 8 KiB, anything
this large is not one."""

"""The cap on what one folder's redaction replaces: refused as soon as the count passes
it, before the file that passes it is rewritten, and with no later file read."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.uploads.redact import READ_CHUNK, redact_folder, redact_folder_by_rule
from app.uploads.redaction.adversarial import dense
from hbench.errors import HbenchError
from hbench.limits import MIB

_, ASSIGNMENTS = dense()


def keys(size: int) -> bytes:
    """Lines of random values assigned to key-like names (`TOKEN_7=…`), `size` bytes."""
    text = ASSIGNMENTS.text(size)
    return text[: text.rindex(b"\n") + 1]


def test_at_the_cap_every_value_is_replaced_and_counted_per_rule(tmp_path: Path) -> None:
    job = folder(
        tmp_path, {"env.txt": keys(4096), "log.txt": b"OPENAI_API_KEY=Xq7Lm2Pz9Rt4Vw8Ny3Kb6\n"}
    )
    total = count(job, tmp_path)

    found = redact_folder_by_rule(job, max_values=total)

    assert total > 50 and sum(found.files.values()) == total
    assert found.rule_totals() == {"generic-credential": total}
    assert found.rules["log.txt"] == {"generic-credential": 1}
    assert b"=[REDACTED]" in (job / "log.txt").read_bytes()


def test_one_value_past_the_cap_is_refused_with_nothing_rewritten(tmp_path: Path) -> None:
    job = folder(tmp_path, {"a.txt": keys(4096), "b.txt": keys(2048)})
    before = {p.name: p.read_bytes() for p in job.iterdir()}
    total = count(job, tmp_path)

    with pytest.raises(HbenchError) as refused:
        redact_folder_by_rule(job, max_values=total - 1)

    (problem,) = refused.value.problems
    assert problem.code == "upload-too-many-secrets"
    assert problem.path == "b.txt"  # where the count passed the cap
    assert f"more than {total - 1:,} key-like values" in problem.message
    # b.txt, where the cap was passed, is not rewritten: its count came first.
    assert (job / "b.txt").read_bytes() == before["b.txt"]


def test_the_scan_stops_within_a_chunk_of_passing_the_cap(tmp_path: Path) -> None:
    # A first chunk full of keys, then 63 MiB more (a sparse file: zeros, which are text).
    job = folder(tmp_path, {"a.txt": chunk(keys(READ_CHUNK // 2)), "z.txt": keys(1024)})
    with (job / "a.txt").open("r+b") as file:
        file.truncate(64 * MIB)
    read = bytes_read()

    with pytest.raises(HbenchError) as refused:
        redact_folder_by_rule(job, max_values=100)

    assert bytes_read() - read < 4 * MIB  # a chunk or two, not the 64 MiB
    assert refused.value.problems[0].path == "a.txt"
    assert b"[REDACTED]" not in (job / "z.txt").read_bytes()


def test_values_found_before_a_file_proves_not_to_be_text_count(tmp_path: Path) -> None:
    # Finding them cost the same, though nothing in the file is then replaced.
    values = keys(4096)
    found = count(folder(tmp_path / "alone", {"z.txt": values}), tmp_path / "alone")
    binary = chunk(values) + b"\xff"
    job = folder(tmp_path, {"a.bin": binary, "z.txt": values})
    alone = folder(tmp_path / "text", {"z.txt": values})

    assert redact_folder(folder(tmp_path / "binary", {"a.bin": binary})) == {}
    assert redact_folder_by_rule(alone, max_values=2 * found - 1).files == {"z.txt": found}
    with pytest.raises(HbenchError) as refused:
        redact_folder_by_rule(job, max_values=2 * found - 1)

    assert refused.value.problems[0].path == "z.txt"


def chunk(text: bytes) -> bytes:
    """`text` and blank lines to fill one read chunk exactly, so the next byte is in the next."""
    return text + b"\n" * (READ_CHUNK - len(text))


def bytes_read() -> int:
    """What this process has read from files so far (Linux's `rchar`)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


def folder(parent: Path, files: dict[str, bytes]) -> Path:
    job = parent / "job"
    job.mkdir(parents=True)
    for name, data in files.items():
        (job / name).write_bytes(data)
    return job


def count(job: Path, scratch: Path) -> int:
    """How many values redacting a copy of the folder replaces, with no cap."""
    copy = scratch / "copy"
    copy.mkdir()
    for path in job.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    return sum(redact_folder(copy).values())

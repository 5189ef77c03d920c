"""The compiled Hyperscan databases kept per machine (`app/uploads/redaction/compiled.py`):
read back where they are safe to trust, compiled again where they are not."""

from __future__ import annotations

from pathlib import Path

import hyperscan
import pytest

from app.uploads.redaction.compiled import cache_folder, cache_key, compiled

PATTERNS = [rb"ghp_[0-9A-Za-z]{36}", rb"AKIA[0-9A-Z]{16}"]
TEXT = b"x AKIAABCDEFGHIJKLMNOP y ghp_" + b"a" * 36
FOUND = [(1, 22), (0, 65)]
"""Each pattern's id and where its match ends."""


def matches(database: hyperscan.Database) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    database.scan(
        TEXT,
        match_event_handler=lambda i, _s, end, _f, _c: found.append((i, end)),
        scratch=hyperscan.Scratch(database=database),  # a database read back has none
    )
    return found


def kept_file(folder: Path) -> Path:
    return folder / f"{cache_key(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH)}.db"


def test_a_database_is_kept_once_and_read_back_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = compiled(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH, folder)
    kept = kept_file(folder)
    written = kept.read_bytes()
    assert folder.stat().st_mode & 0o777 == 0o700

    again = compiled(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH, folder)

    assert matches(again) == matches(first) == FOUND
    assert kept.read_bytes() == written  # read, not compiled and written again
    assert [p.name for p in folder.iterdir()] == [kept.name]


def test_the_key_changes_with_the_patterns_and_the_flags() -> None:
    keys = {
        cache_key(PATTERNS, 0),
        cache_key(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH),
        cache_key(PATTERNS[:1], 0),
        cache_key([PATTERNS[0] + PATTERNS[1]], 0),  # one pattern, not the two joined
    }
    assert len(keys) == 4


@pytest.mark.parametrize("damage", ["others may write it", "not a database"])
def test_a_file_not_to_be_trusted_is_compiled_again(tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "cache"
    compiled(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH, folder)
    kept = kept_file(folder)
    # Another database of the same size: read back, it would find nothing of these.
    other = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    other.compile(expressions=[rb"never-in-the-text"] * 2, ids=[0, 1], elements=2, flags=[0, 0])
    kept.write_bytes(hyperscan.dumpb(other) if damage == "others may write it" else b"junk")
    if damage == "others may write it":
        kept.chmod(0o666)

    database = compiled(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH, folder)

    assert matches(database) == FOUND
    assert kept.stat().st_mode & 0o022 == 0  # replaced by a good one, writable by its owner


def test_a_folder_others_may_write_is_neither_read_nor_written(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o777)

    database = compiled(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH, folder)

    assert matches(database) == FOUND
    assert list(folder.iterdir()) == []


def test_a_folder_that_cannot_be_made_only_costs_a_compile(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")

    database = compiled(PATTERNS, hyperscan.HS_FLAG_SINGLEMATCH, blocker / "cache")

    assert matches(database) == FOUND


def test_the_folder_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "hbench" / "hyperscan"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_folder() == Path.home() / ".cache" / "hbench" / "hyperscan"

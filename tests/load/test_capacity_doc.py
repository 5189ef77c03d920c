"""docs/capacity.md is what bench/capacity.py makes of the measured figures kept in
bench/results/: regenerated here, it must come out the same, so no one edits the figures
by hand and a new measurement is never left out of the document."""

from __future__ import annotations

from pathlib import Path

from capacity import DOC, main

ROOT = Path(__file__).resolve().parents[2]


def test_the_capacity_document_is_the_generators_output(tmp_path: Path) -> None:
    made = tmp_path / "capacity.md"
    assert main(["--output", str(made)]) == 0
    assert DOC == ROOT / "docs" / "capacity.md"
    assert made.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8"), (
        "docs/capacity.md differs from its generator's output: run "
        ".venv/bin/python bench/capacity.py"
    )

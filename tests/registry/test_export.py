"""The static registry validates against its documented shapes, and search finds benchmarks."""

from __future__ import annotations

import json

from registry.export import Index, IndexEntry, export_registry, validate_export
from registry.loader import load_registry
from registry.search import search


def test_the_default_export_validates_against_its_shapes() -> None:
    files = export_registry(load_registry())
    assert validate_export(files) == []
    registry = load_registry()
    assert sorted(files) == sorted(
        ["index.json"]
        + [f"b/{slug}.json" for slug in registry.benchmarks]
        + [f"m/{slug}.json" for slug in registry.models]
    )


def test_records_carry_the_fields_the_skill_document_names() -> None:
    files = export_registry(load_registry())
    record = json.loads(files["b/swe-bench-verified.json"])
    assert record["harbor"]["status"] == "adapter"
    assert record["harbor"]["adapter"]["kind"] == "harbor_native"
    assert record["license"]["allowsRedistribution"] is True
    assert record["metric"] == "resolved_rate" and record["metricScale"] == "percent"
    score = record["knownScores"][0]
    assert score["sourceType"] == "self_reported" and score["source"].startswith("https://")
    assert record["commands"][-1] == "harbor run -d swebench-verified@1.0 -a <agent> -m <model>"
    assert [b["slug"] for b in record["boards"]] == ["swe-bench-verified-gpt-5"]
    model = json.loads(files["m/gpt-5.json"])
    assert model["price"]["outputPerMtok"] == 10.0
    assert json.loads(files["b/ifeval.json"])["commands"] == []


def test_the_export_is_stable() -> None:
    assert export_registry(load_registry()) == export_registry(load_registry())


def test_validation_reports_each_bad_file() -> None:
    files = export_registry(load_registry())
    broken = dict(files)
    record = json.loads(broken["b/aime.json"])
    del record["harbor"]
    broken["b/aime.json"] = json.dumps(record)
    broken["b/other.json"] = files["b/usaco.json"]
    broken["extra.txt"] = "x"
    del broken["index.json"]
    problems = validate_export(broken)
    assert {p.code for p in problems} == {"registry-export-invalid"}
    assert sorted(p.path or "" for p in problems) == [
        "b/aime.json", "b/other.json", "extra.txt", "index.json",
    ]  # fmt: skip


def slugs(found: list[IndexEntry]) -> list[str]:
    return [entry.slug for entry in found]


def test_search_matches_words_axes_and_harbor_status() -> None:
    index = Index.model_validate_json(export_registry(load_registry())["index.json"])
    assert slugs(search(index, "swe")) == [
        "swe-bench", "swe-bench-multilingual", "swe-bench-pro", "swe-bench-verified",
    ]  # fmt: skip
    assert slugs(search(index, "mmlu")) == ["mmlu", "mmlu-pro"]
    assert "ifeval" in slugs(search(index, "instruction"))
    assert "ifeval" not in slugs(search(index, "instruction", harbor_only=True))
    assert slugs(search(index, axis="math")) == ["aime", "gsm8k", "math-500"]
    assert len(search(index, limit=3)) == 3
    assert search(index, "no-such-thing") == []

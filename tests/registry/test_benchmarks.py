"""The bundled registry's benchmarks: enough of them across the skill's axes, the skill's own
examples runnable (`mmlu-pro`, `gsm8k`), every known score with its source and label, and
each row-shaped benchmark's mapping pulling a row of its dataset's shape into a task that
the oracle passes and a wrong answer fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hbench.cli.registry import app
from registry.loader import load_registry
from registry.pull import grader, sources
from registry.pull.rows import pull_rows
from registry.pull.tasks import make_task

REGISTRY = load_registry()
runner = CliRunner()

# One row per `hf_rows` benchmark, with the fields its dataset card lists (values made up),
# and the letter or text the oracle must write for it.
ROWS: dict[str, tuple[dict[str, Any], str, str]] = {
    "gsm8k": (
        {
            "question": "Ann has 3 bags of 4 apples. How many apples?",
            "answer": "3 bags of 4 is 3*4=<<3*4=12>>12 apples.\n#### 12",
        },
        "12",
        "13",
    ),
    "math-500": (
        {
            "problem": "What is $1/2 + 1/4$?",
            "solution": "It is $\\boxed{\\frac{3}{4}}$.",
            "answer": "\\frac{3}{4}",
            "subject": "Prealgebra",
            "level": 1,
            "unique_id": "test/prealgebra/1.json",
        },
        "\\frac{3}{4}",
        "\\frac{1}{2}",
    ),
    "mmlu": (
        {
            "question": "2 + 2 =",
            "subject": "elementary_mathematics",
            "choices": ["3", "4", "5", "6"],
            "answer": 1,
        },
        "B",
        "A",
    ),
    "mmlu-pro": (
        {
            "question_id": 70,
            "question": "Which is a noble gas?",
            "options": ["O", "N", "Ne", "H", "C", "S", "P", "K", "Na", "Cl"],
            "answer": "C",
            "answer_index": 2,
            "cot_content": "",
            "category": "chemistry",
            "src": "x",
        },
        "C",
        "D",
    ),
    "arc-challenge": (
        {
            "id": "Mercury_7",
            "question": "Which is a mammal?",
            "choices": {"text": ["shark", "frog", "whale", "trout"], "label": ["1", "2", "3", "4"]},
            "answerKey": "3",
        },
        "C",
        "B",
    ),
    "arc-easy": (
        {
            "id": "MCAS_1",
            "question": "What do plants need?",
            "choices": {"text": ["light", "sand", "salt"], "label": ["A", "B", "C"]},
            "answerKey": "A",
        },
        "A",
        "C",
    ),
}


def test_the_registry_covers_the_skills_axes_and_examples() -> None:
    benchmarks = REGISTRY.benchmarks
    assert len(benchmarks) >= 30
    axes = {axis for b in benchmarks.values() for axis in b.axes}
    assert axes >= {"coding", "math", "science", "knowledge", "reasoning", "commonsense"}
    for slug in ("mmlu-pro", "gsm8k"):
        harbor = benchmarks[slug].harbor
        assert harbor.status == "adapter"
        assert harbor.adapter is not None and harbor.adapter.kind == "hf_rows"
    assert set(ROWS) | {"humaneval"} == {
        slug for slug, b in benchmarks.items()
        if b.harbor.adapter is not None and b.harbor.adapter.kind == "hf_rows"
    }  # fmt: skip


def test_every_known_score_names_its_source_and_its_kind() -> None:
    scores = [(b, s) for b in REGISTRY.benchmarks.values() for s in b.known_scores]
    assert len(scores) >= 60
    assert {s.source_type for _, s in scores} >= {"self_reported", "independent"}
    for benchmark, score in scores:
        assert score.source.startswith("https://"), (benchmark.slug, score)
        assert score.model.strip() == score.model and score.model
        if benchmark.metric_scale == "percent":
            assert 0 <= score.value <= 100, (benchmark.slug, score)
    # Scores read from a repository cite the file at the commit it was read from.
    for _, score in scores:
        if score.source.startswith("https://github.com/") and "/blob/" in score.source:
            assert len(score.source.split("/blob/")[1].split("/")[0]) == 40, score.source


@pytest.mark.parametrize("slug", sorted(ROWS))
def test_a_row_of_the_datasets_shape_becomes_a_task_the_oracle_passes(
    slug: str, tmp_path: Path
) -> None:
    benchmark = REGISTRY.benchmarks[slug]
    row, right, wrong = ROWS[slug]
    source = tmp_path / "rows.jsonl"
    source.write_text(json.dumps(row) + "\n")
    pulled = pull_rows(
        benchmark, sources.from_path(source, "test"), tmp_path / slug, n=None, seed=7,
        tool_version="0.0.test",
    )  # fmt: skip
    task = tmp_path / slug / f"{slug}-0000"
    expected = json.loads((task / "tests" / "expected.json").read_text())
    assert expected["answer"] == right
    assert grader.grade(expected, right) and not grader.grade(expected, wrong)
    assert pulled.manifest.grading == expected["grading"]
    solve = (task / "solution" / "solve.sh").read_text()
    assert f"\n{right}\n" in solve
    instruction = (task / "instruction.md").read_text()
    assert "{" + "question}" not in instruction and "{" + "problem}" not in instruction


def test_labelled_options_are_listed_as_letters_in_the_instruction() -> None:
    row, _, _ = ROWS["arc-challenge"]
    task = make_task(REGISTRY.benchmarks["arc-challenge"], 0, row, solution=True)
    assert "A. shark\nB. frog\nC. whale\nD. trout" in task.files["instruction.md"]
    missing = {**row, "choices": {"text": ["a", "b"], "label": ["A"]}}
    with pytest.raises(Exception, match="no label for each option"):
        make_task(REGISTRY.benchmarks["arc-challenge"], 0, missing, solution=True)


def search(*args: str) -> list[dict[str, Any]]:
    result = runner.invoke(app, ["search", *args, "--json"])
    assert result.exit_code == 0, result.output
    found: list[dict[str, Any]] = json.loads(result.output)
    return found


def test_the_skills_search_commands_find_runnable_benchmarks() -> None:
    assert [e["slug"] for e in search("mmlu", "--harbor-only")] == ["mmlu", "mmlu-pro"]
    coding = search("--axis", "coding", "--harbor-only", "--limit", "10")
    assert len(coding) == 10
    assert all("coding" in e["axes"] and e["harbor"]["status"] in ("native", "adapter")
               for e in coding)  # fmt: skip
    every_coding = search("--axis", "coding")
    assert len(every_coding) > len(search("--axis", "coding", "--harbor-only"))
    assert "ifeval" not in [e["slug"] for e in search("--harbor-only")]
    assert [e["slug"] for e in search("--axis", "commonsense", "--limit", "1")] == ["hellaswag"]
    result = runner.invoke(app, ["search", "--limit", "0"])
    assert result.exit_code != 0


def test_info_of_mmlu_pro_says_how_to_pull_and_run_it() -> None:
    result = runner.invoke(app, ["info", "mmlu-pro", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["harbor"]["status"] == "adapter"
    assert record["harbor"]["adapter"]["kind"] == "hf_rows"
    assert record["license"]["allowsRedistribution"] is True
    assert record["commands"] == [
        "hbench registry pull mmlu-pro",
        "hbench registry run mmlu-pro -a oracle",
        "hbench registry run mmlu-pro -a <agent> -m <model>",
    ]
    assert len(record["knownScores"]) >= 5

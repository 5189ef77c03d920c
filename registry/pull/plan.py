"""What `hbench registry pull` does for a benchmark whose tasks are not made from rows: the
run command of a Harbor dataset, a shallow clone of a task repository, or the instructions
of a benchmark that runs outside Harbor. Pure: the caller prints and clones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hbench.errors import HbenchError
from registry.schema import Benchmark

PlanKind = Literal["rows", "dataset", "clone", "instructions"]


@dataclass(frozen=True)
class Plan:
    kind: PlanKind
    lines: list[str]
    """What to print."""
    clone_url: str | None = None
    subdir: str | None = None


def plan(benchmark: Benchmark) -> Plan:
    """How the benchmark is pulled, by its `harbor.adapter.kind`."""
    harbor = benchmark.harbor
    adapter = harbor.adapter
    if adapter is not None and adapter.kind == "hf_rows":
        return Plan("rows", [])
    if adapter is not None and adapter.kind == "external_harness":
        return Plan("instructions", _external_lines(benchmark))
    dataset = (adapter.dataset if adapter else None) or harbor.dataset
    if dataset is not None and harbor.status in ("native", "adapter"):
        return Plan(
            "dataset",
            [
                f"{benchmark.slug} runs straight from Harbor's dataset {dataset}: there is "
                "nothing to pull. Check the verifier, then run it:",
                f"  hbench registry run {dataset} -a oracle",
                f"  hbench registry run {dataset} -a <agent> -m <model>",
            ],
        )
    if adapter is not None and adapter.repo_url is not None:
        return Plan("clone", [], clone_url=adapter.repo_url, subdir=adapter.subdir)
    if harbor.status == "external_harness":
        return Plan("instructions", _external_lines(benchmark))
    raise HbenchError(
        "pull-not-pullable",
        f"{benchmark.slug} can't run through Harbor (harbor.status {harbor.status}); "
        "`hbench registry search --harbor-only` lists those that can",
    )


def _external_lines(benchmark: Benchmark) -> list[str]:
    adapter = benchmark.harbor.adapter
    lines = [
        f"{benchmark.slug} runs in its own harness, not in Harbor: nothing was written, and "
        "hbench can't make a reproduced score of it.",
    ]
    if adapter is not None and adapter.instructions:
        lines.append(adapter.instructions)
    where = (adapter.repo_url if adapter else None) or benchmark.homepage
    if where:
        lines.append(f"Its harness: {where}")
    if benchmark.harbor.note:
        lines.append(benchmark.harbor.note)
    return lines

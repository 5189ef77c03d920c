"""`hbench registry pull` of an `hf_rows` benchmark: choose the rows, write a task folder
per row and the pull's manifest, into a fresh folder that replaces the old one at once.

The same rows, `n` and `seed` always give the same files: the rows are a seeded sample of
the split, kept in the split's order, and no file records the time of the pull.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hbench.errors import HbenchError
from registry.pull.manifest import (
    NOTICE_FILE,
    PULL_MANIFEST,
    PulledFrom,
    PulledLicense,
    PulledRow,
    PullManifest,
    files_digest,
    read_manifest,
)
from registry.pull.sources import Rows
from registry.pull.tasks import Task, make_task
from registry.schema import Benchmark

DEFAULT_N = 50
DEFAULT_SEED = 7


@dataclass(frozen=True)
class Pulled:
    """What a pull wrote."""

    folder: Path
    manifest: PullManifest
    notice: str | None
    """The licence notice printed and written to NOTICE.txt, when redistribution is not allowed."""


def choose_rows(total: int, n: int | None, seed: int) -> list[int]:
    """The split's rows a pull takes: all of them (`n` None or at least `total`), else a
    sample of `n` drawn with `seed`, in the split's order."""
    if n is None or n >= total:
        return list(range(total))
    # A sample anyone can draw again from the seed; nothing here is secret.
    return sorted(random.Random(seed).sample(range(total), n))  # noqa: S311


def notice_of(benchmark: Benchmark) -> str | None:
    licence = benchmark.license
    if licence.allows_redistribution:
        return None
    return (
        f"NOTICE: {benchmark.name}'s data is under {licence.name}, which does not allow "
        "redistributing it: keep these task folders on this machine, and never commit, upload "
        "or publish them; push only the score summary."
        + (f" ({licence.note})" if licence.note else "")
    )


def pull_rows(
    benchmark: Benchmark, rows: Rows, out: Path, *, n: int | None, seed: int, tool_version: str
) -> Pulled:
    """Write the chosen rows of `rows` as task folders under `out`, with the manifest, which
    names the pulling tool's version (`tool_version`)."""
    adapter = benchmark.harbor.adapter
    if adapter is None or adapter.rows is None:
        raise HbenchError("pull-not-pullable", f"{benchmark.slug} has no row mapping")
    if not rows.rows:
        raise HbenchError("pull-source-unreadable", f"{rows.location} holds no rows")
    _check_folder(out, benchmark.slug)
    solutions = benchmark.license.allows_redistribution
    chosen = choose_rows(len(rows.rows), n, seed)
    tasks = [make_task(benchmark, i, rows.rows[i], solution=solutions) for i in chosen]
    notice = notice_of(benchmark)
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        written = [item for task in tasks for item in _write_task(scratch, task)]
        if notice is not None:
            (scratch / NOTICE_FILE).write_text(notice + "\n", encoding="utf-8")
        manifest = PullManifest(
            benchmark=benchmark.slug,
            metric=benchmark.metric,
            source=PulledFrom(
                kind=rows.kind,
                location=rows.location,
                revision=rows.revision,
                split=rows.split,
                sha256=rows.sha256,
            ),
            seed=seed,
            n=n,
            split_rows=len(rows.rows),
            rows=[PulledRow(task=t.name, row=t.row, id=t.row_id) for t in tasks],
            grading=adapter.rows.grading,
            license=PulledLicense(
                spdx=benchmark.license.spdx,
                name=benchmark.license.name,
                allows_redistribution=benchmark.license.allows_redistribution,
            ),
            solutions=solutions,
            hbench_version=tool_version,
            tasks_digest=files_digest(written),
        )
        text = json.dumps(manifest.to_json_dict(), indent=2, sort_keys=True) + "\n"
        (scratch / PULL_MANIFEST).write_text(text, encoding="utf-8")
        scratch.chmod(0o755)
        if out.exists():
            shutil.rmtree(out)
        scratch.rename(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return Pulled(folder=out, manifest=manifest, notice=notice)


def _check_folder(out: Path, slug: str) -> None:
    """`out` may be new, empty, or an earlier pull of the same benchmark (replaced)."""
    if not out.exists():
        return
    if not out.is_dir():
        raise HbenchError("pull-folder-taken", f"{out} exists and is not a folder")
    if not any(out.iterdir()):
        return
    earlier = read_manifest(out)
    if earlier is None or earlier.benchmark != slug:
        raise HbenchError(
            "pull-folder-taken",
            f"{out} already holds files that are no pull of {slug}; pull into another "
            "folder with --out DIR, or move them away",
        )


def _write_task(root: Path, task: Task) -> list[tuple[str, bytes]]:
    """Write a task's files; each as (path inside the pulled folder, bytes), for the digest.

    Plain strings and os calls: a pull writes thousands of small files, and a Path per
    file cost more than the writes (bench/registry_pull.py)."""
    written = []
    made = set()
    for relative, text in task.files.items():
        data = text.encode("utf-8")
        path = f"{root}/{task.name}/{relative}"
        folder = path.rsplit("/", 1)[0]
        if folder not in made:
            os.makedirs(folder, exist_ok=True)  # noqa: PTH103
            made.add(folder)
        with open(path, "wb") as stream:  # noqa: PTH123
            stream.write(data)
        if relative.endswith(".sh"):
            os.chmod(path, 0o755)  # noqa: PTH101, S103 - scripts Harbor runs
        written.append((f"{task.name}/{relative}", data))
    return written

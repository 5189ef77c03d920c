"""How the CLI speaks: one console, problems printed with their rule codes, byte progress bars."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from hbench.codes import docs_link
from hbench.errors import HbenchError, Problem

if TYPE_CHECKING:
    from hbench.jobs.manifest import Manifest

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)


def print_problems(problems: Iterable[Problem]) -> None:
    """Print each problem on its own line, ending with its rule code."""
    for problem in problems:
        where = f"{escape(problem.path)}: " if problem.path else ""
        errors.print(f"[red]✗[/red] {where}{escape(problem.detail)}")


def fail(error: HbenchError) -> typer.Exit:
    """Print an error's problems and where its code is explained; return the exit to raise."""
    print_problems(error.problems)
    errors.print(f"[dim]See {docs_link(error.code)} for what it means and how to fix it.[/dim]")
    return typer.Exit(code=1)


@contextmanager
def handled() -> Iterator[None]:
    """Turn an HbenchError into printed problems and exit status 1, never a traceback."""
    try:
        yield
    except HbenchError as error:
        raise fail(error) from None


@contextmanager
def byte_progress(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """A progress bar over bytes; yields the callback that advances it.

    The bar is transient: where stderr is no terminal it would show nothing, so there it
    is not made (nor rich.progress imported, nor its refresh thread started)."""
    if not errors.is_terminal:
        yield lambda n: None
        return
    # Imported here, as below: a command imports what it uses, and --help none of it.
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=errors,
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n: progress.advance(task, n)


@contextmanager
def folder_progress(description: str, folder: Path) -> Iterator[Callable[[int], None]]:
    """A progress bar over the bytes of a folder's files, sized only if it is shown."""
    total = folder_size(folder) if errors.is_terminal else 0
    with byte_progress(description, total) as advance:
        yield advance


def folder_size(folder: Path) -> int:
    """The total size of the regular files under a folder, for a progress bar's total."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def seal_with_progress(job_dir: Path, *, spec_digest: str | None = None) -> Manifest:
    """Seal a job folder with a progress bar over the bytes hashed."""
    from hbench.jobs.sealing import seal  # noqa: PLC0415

    with folder_progress("sealing", job_dir) as advance:
        return seal(job_dir, spec_digest=spec_digest, progress=advance)


def check_resumable_with_progress(job_dir: Path) -> None:
    """Refuse (`resume-seal-broken`) a sealed job changed since; a bar shows the bytes hashed."""
    from hbench.jobs.reseal import check_resumable  # noqa: PLC0415

    with folder_progress("checking the seal", job_dir) as advance:
        check_resumable(job_dir, progress=advance)

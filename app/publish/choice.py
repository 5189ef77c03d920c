"""Which board a job is published on: pure, over placement's answer.

An issued run keeps the board it was issued for. Any other job is placed again
(`registry.placement.place`) against the registry and the boards jobs have opened since
its upload: it goes on the one board it fits, on the board the owner names among
several, or on a new board when it fits none ("Publish it to its board" in
../shared/spec/hbench-upload-a-job.txt).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.db.summary import SummaryBoards
from hbench.errors import HbenchError, Problem
from registry.placement import OpenBoard, Placement

CHOOSE = "publish-board-choice"
NOT_FITTING = "publish-board-not-fitting"
NOT_PLACEABLE = "job-not-placeable"


@dataclass(frozen=True)
class Target:
    """The board a job goes on, and the board record to open first when it is new."""

    board: str
    opens: OpenBoard | None = None


class BoardChoiceError(HbenchError):
    """The job fits several boards and the request named none: the answer lists them."""

    def __init__(self, boards: Sequence[str]) -> None:
        listed = ", ".join(boards)
        super().__init__(
            CHOOSE,
            f"the job fits {len(boards)} boards ({listed}); publish it again naming one, "
            'with the body {"board": "<board>"} (hbench bench publish JOB_ID --board <board>)',
        )
        self.boards = list(boards)


def issued_target(board: str, requested: str | None) -> Target:
    """An issued run's board: the one it was issued for, whatever else it fits."""
    if requested is not None and requested != board:
        raise HbenchError(
            NOT_FITTING,
            f"the job is an issued run of {board}, and an issued run keeps the board it was "
            f"issued for; publish it without a board, or with {board}",
        )
    return Target(board)


def placed_target(placement: Placement, requested: str | None) -> Target:
    """A self-reported job's board, from placement's answer and the board asked for."""
    if placement.problems:
        raise HbenchError.from_problems(list(placement.problems))
    if placement.opens is not None:
        slug = placement.opens.slug
        if requested is not None and requested != slug:
            raise _not_fitting(requested, [], opens=slug)
        return Target(slug, placement.opens)
    fits = list(placement.fits)
    if requested is not None:
        if requested not in fits:
            raise _not_fitting(requested, fits)
        return Target(requested)
    if len(fits) > 1:
        raise BoardChoiceError(fits)
    return Target(fits[0])


def unplaceable(boards: SummaryBoards) -> HbenchError:
    """Why a job whose upload could not describe it to placement fits no board."""
    notes = [Problem(n.code or NOT_PLACEABLE, n.message) for n in boards.notes]
    return HbenchError.from_problems(
        notes
        or [Problem(NOT_PLACEABLE, "the job can't be described to the boards; it stays private")]
    )


def _not_fitting(requested: str, fits: Sequence[str], *, opens: str | None = None) -> HbenchError:
    where = (
        f"it fits {', '.join(fits)}"
        if fits
        else f"it fits no existing board and would open {opens}"
    )
    return HbenchError(
        NOT_FITTING,
        f"the job does not fit the board {requested}: {where}; publish it without a board "
        "or name one it fits (GET /api/bench/jobs/{id} lists them under boards.fits)",
    )

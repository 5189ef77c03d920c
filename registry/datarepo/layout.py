"""Where each file of the data repository lives (`docs/data-repository.md`)."""

from __future__ import annotations

from datetime import datetime

REGISTRY = "registry"
"""The registry folder: benchmarks/, models/, boards/, prices.json (docs/registry.md)."""


def board_dir(board: str) -> str:
    return f"boards/{board}"


def open_board_file(board: str) -> str:
    """The definition of a board a job opened; named boards live in the registry."""
    return f"boards/{board}/board.json"


def named_board_file(board: str) -> str:
    return f"{REGISTRY}/boards/{board}.json"


def runs_dir(board: str) -> str:
    return f"boards/{board}/runs"


def run_file(board: str, run: str) -> str:
    """One published run per file."""
    return f"boards/{board}/runs/{run}.json"


def signature_file(board: str, run: str) -> str:
    """A run's signed provenance: the Sigstore bundle its upload carried (registry/signature.py)."""
    return f"boards/{board}/signatures/{run}.sigstore.json"


def issued_file(board: str) -> str:
    """The issued runs counted on a board, per entry."""
    return f"boards/{board}/issued.json"


def rows_file(board: str) -> str:
    """The board's recomputed rows: derived, rewritten by every change to the board."""
    return f"boards/{board}/rows.json"


PUSHED_DIR = "pushed-runs"
"""Run summaries pushed to `POST /v1/runs`: no board, no job behind them."""


def pushed_run_file(run: str) -> str:
    """One pushed run per file."""
    return f"{PUSHED_DIR}/{run}.json"


def audit_file(at: datetime) -> str:
    """The append-only audit log, one JSON line per event, one file per month."""
    return f"audit/{at:%Y-%m}.jsonl"


def board_of_path(path: str) -> str | None:
    """The board a path under `boards/` belongs to."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "boards" else None

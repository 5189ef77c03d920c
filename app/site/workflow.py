"""The data repository's Pages workflow, shipped with hbench for `data-repo init` to add."""

from __future__ import annotations

from pathlib import Path

TEMPLATE = Path(__file__).parent / "pages-workflow.yml"

WORKFLOW_PATH = ".github/workflows/pages.yml"
"""Where the workflow goes in the data repository."""


def pages_workflow_files() -> dict[str, str]:
    """The files a new data repository needs for its Pages site, as path to text: pass
    them with the registry's to `app.datarepo.repo_init.create_data_repository`."""
    return {WORKFLOW_PATH: TEMPLATE.read_text(encoding="utf-8")}

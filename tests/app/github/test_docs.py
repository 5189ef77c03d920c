"""The GitHub App's page is held to the code: every comment command the parser knows is
documented there, with its usage, and it documents no other."""

from __future__ import annotations

import re
from pathlib import Path

from app.github.commands import COMMANDS

DOCS = Path(__file__).resolve().parents[3] / "docs" / "github-app.md"


def test_every_comment_command_is_documented() -> None:
    text = DOCS.read_text()
    documented = re.findall(r"^### `/hbench ([a-z]+)`$", text, flags=re.MULTILINE)
    assert sorted(documented) == sorted(COMMANDS), "docs/github-app.md and the parser differ"
    for spec in COMMANDS.values():
        assert f"`{spec.usage}`" in text, f"the usage of {spec.name} is not in the docs"

"""`.build-state.json`: what the last build into a folder rendered each unit from, and the
files it wrote, so the next build renders only what changed (`docs/site.md`, "Building")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

STATE_FILE = ".build-state.json"
STATE_VERSION = 2


@dataclass
class BuildState:
    """Each unit's input digest and the files it wrote, the digest of the builder that
    rendered them, and each input's stat digest with its input digest
    (`DataFiles.stat_digest`)."""

    builder: str = ""
    units: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    stats: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {"version": STATE_VERSION, "builder": self.builder, "units": self.units,
             "outputs": self.outputs, "stats": self.stats},
            sort_keys=True, separators=(",", ":"),
        )  # fmt: skip

    def known_digests(self, stats: Mapping[str, str]) -> dict[str, str]:
        """The input digests of the inputs whose stat digest is still the one recorded."""
        return {unit: kept for unit, (stat, kept) in self.stats.items() if stats.get(unit) == stat}

    @classmethod
    def read(cls, out: Path) -> BuildState:
        """The state of the last build into `out`; an empty one where there is none, or
        one this builder does not read (a build from it renders everything)."""
        path = out / STATE_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return cls()
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            return cls()
        return cls(data["builder"], data["units"], data["outputs"], data["stats"])

    def save(self, out: Path) -> None:
        """Write the state into `out`, whole: under another name, then renamed."""
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / f"{STATE_FILE}.tmp"
        tmp.write_text(self.to_json(), encoding="utf-8")
        tmp.replace(out / STATE_FILE)

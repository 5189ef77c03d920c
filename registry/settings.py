"""The settings of a Harbor job that change comparability, read from its `config.json`.

Two jobs go on the same board only when these settings agree. The result holds only
settings that differ from Harbor's defaults, with per-phase timeout multipliers
resolved, so `--timeout-multiplier 2` and setting all four phases to 2 compare equal,
and a job with default settings has `{}`. Environment variables are left out on
purpose: they carry keys, and Harbor templates secrets into them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

PHASES = ("agent", "verifier", "agent_setup", "environment_build")

# (section, key, default): Harbor 0.25's JobConfig fields that change what a task
# allows or how it is graded (see ../shared/reference/harbor.md §2 and §8).
FIELDS: tuple[tuple[str, str, JsonValue], ...] = (
    ("agent", "override_timeout_sec", None),
    ("agent", "override_setup_timeout_sec", None),
    ("agent", "max_timeout_sec", None),
    ("agent", "extra_allowed_hosts", []),
    ("verifier", "override_timeout_sec", None),
    ("verifier", "max_timeout_sec", None),
    ("verifier", "disable", False),
    ("verifier", "import_path", None),
    ("verifier", "kwargs", {}),
    ("verifier", "extra_allowed_hosts", []),
    ("environment", "override_cpus", None),
    ("environment", "override_memory_mb", None),
    ("environment", "override_storage_mb", None),
    ("environment", "override_gpus", None),
    ("environment", "override_tpu", None),
    ("environment", "cpu_enforcement_policy", "auto"),
    ("environment", "memory_enforcement_policy", "auto"),
    ("environment", "mounts", None),
    ("environment", "extra_docker_compose", []),
    ("environment", "extra_allowed_hosts", []),
    ("environment", "kwargs", {}),
)

# Agent options that do not change what the agent does, or that stand for a file whose
# digest the entry records instead: the entry must not split on them.
IGNORED_AGENT_KWARGS = frozenset({"version", "prompt_template_path"})


def settings_from_config(config: Mapping[str, Any]) -> dict[str, JsonValue]:
    """The comparability settings of a job's `config.json` that differ from the defaults."""
    settings: dict[str, JsonValue] = {}
    base = config.get("timeout_multiplier")
    base = 1.0 if base is None else float(base)
    for phase in PHASES:
        value = config.get(f"{phase}_timeout_multiplier")
        effective = base if value is None else float(value)
        if effective != 1.0:
            settings[f"{phase}_timeout_multiplier"] = _normalised(effective)
    sections = {
        "agent": _first_agent(config),
        "verifier": config.get("verifier") or {},
        "environment": config.get("environment") or {},
    }
    for section, key, default in FIELDS:
        value = _normalised(sections[section].get(key, default))
        if value != _normalised(default) and value is not None:
            settings[f"{section}.{key}"] = value
    return settings


def agent_options(agent: Mapping[str, Any]) -> dict[str, JsonValue]:
    """An agent's options as its entry records them: kwargs, skills and MCP servers."""
    options: dict[str, JsonValue] = {
        key: _normalised(value)
        for key, value in (agent.get("kwargs") or {}).items()
        if key not in IGNORED_AGENT_KWARGS
    }
    for key in ("skills", "mcp_servers"):
        if agent.get(key):
            options[key] = _normalised(agent[key])
    return options


def _first_agent(config: Mapping[str, Any]) -> Mapping[str, Any]:
    agents = config.get("agents") or [{}]
    first = agents[0]
    return first if isinstance(first, Mapping) else {}


def _normalised(value: Any) -> JsonValue:
    """Lists of strings (hosts) compare as sets, and 2.0 equals 2, so digests agree."""
    if isinstance(value, list):
        items = [_normalised(v) for v in value]
        if all(isinstance(v, str) for v in items):
            return sorted(items, key=str)
        return items
    if isinstance(value, Mapping):
        return {str(k): _normalised(v) for k, v in sorted(value.items())}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    result: JsonValue = value
    return result

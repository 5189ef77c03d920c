"""`registry.naming`: the one slug of a model's free-text name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.check import check_folder
from registry.loader import load_registry
from registry.naming import model_slug, normalise
from registry.schema import Model
from tests.registry.helpers import copy_default_registry

REGISTRY = load_registry()


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("Claude Sonnet 4.5", "claude-sonnet-4-5"),  # its display name
        ("  CLAUDE-SONNET-4-5 ", "claude-sonnet-4-5"),
        ("openrouter/anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("openai/gpt-5-2025-08-07", "gpt-5"),  # a name Harbor records
        ("none", "none"),
        ("Anthropic/Claude-Opus-4-8", "claude-opus-4-8"),  # unknown: normalised
        ("some_org/My_Model  v2", "my-model-v2"),
        ("Claude Opus 4.8", "claude-opus-4.8"),
        ("///", None),
        ("", None),
    ],
)
def test_a_model_name_has_one_slug(text: str, slug: str | None) -> None:
    assert model_slug(REGISTRY, text) == slug


def test_a_registry_alias_names_its_model() -> None:
    model = REGISTRY.models["gpt-5"].model_copy(update={"aliases": ["GPT 5 (high)"]})
    registry = type(REGISTRY)(models={**REGISTRY.models, "gpt-5": model})
    assert model_slug(registry, "gpt 5 (HIGH)") == "gpt-5"
    assert model_slug(REGISTRY, "gpt 5 (HIGH)") == "gpt-5-high"


def test_normalised_slugs_are_registry_slugs() -> None:
    for text in ("a..b", "-x-", "Ünïcode model", "x" * 300, "v1.-2"):
        slug = normalise(text)
        assert slug is not None and len(slug) <= 100
        # A model record would take it as its slug.
        assert Model(slug=slug, name="n", provider="p", agents=["codex"]).slug == slug


def test_two_models_may_not_share_a_name_or_an_alias(tmp_path: Path) -> None:
    root = copy_default_registry(tmp_path / "registry")
    path = root / "models" / "gpt-5-mini.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "aliases": ["GPT-5"]}))
    problems = check_folder(root)
    assert [p.code for p in problems] == ["registry-duplicate-model-name"]
    assert "'gpt-5'" in problems[0].message

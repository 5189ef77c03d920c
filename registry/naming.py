"""One name per model: the free text a run is pushed with (`anthropic/Claude-Opus-4-8`,
`Claude Sonnet 4.5`, `openai/gpt-5-2025-08-07`) as the one `modelSlug` the runs API, its
aggregates and the site all use.

A registry model is found by its slug, display name, the names Harbor records for it or its
aliases, ignoring case and a provider prefix; any other model gets the slug its text
normalises to (lower case, no provider prefix, words joined by `-`).
"""

from __future__ import annotations

import re

from registry.loader import Registry

SLUG = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
MAX_SLUG = 100


def model_slug(registry: Registry, text: str) -> str | None:
    """The one slug of the model `text` names; None only when it holds no letter or digit."""
    wanted = " ".join(text.split()).lower()
    if not wanted:
        return None
    tail = wanted.rsplit("/", 1)[-1].strip()
    for candidate in dict.fromkeys((wanted, tail)):
        known = _known(registry, candidate)
        if known is not None:
            return known
    return normalise(tail)


def _known(registry: Registry, name: str) -> str | None:
    if name in registry.models:
        return name
    for model in registry.models.values():
        names = (model.name, *model.harbor_names, *model.aliases)
        for known in names:
            lowered = known.lower()
            if name in (lowered, lowered.rsplit("/", 1)[-1]):
                return model.slug
    return None


def normalise(text: str) -> str | None:
    """`Claude Opus 4.8` → `claude-opus-4.8`: lower case, runs of other characters as one
    `-`, a dot kept between letters or digits; None when nothing is left."""
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower())
    slug = re.sub(r"-*\.[.-]*", ".", slug)
    slug = re.sub(r"-{2,}", "-", slug).strip(".-")
    slug = slug[:MAX_SLUG].rstrip(".-")
    return slug if SLUG.match(slug) else None

"""One name per model: the free text a run is pushed with (`anthropic/Claude-Opus-4-8`,
`Claude Sonnet 4.5`, `openai/gpt-5-2025-08-07`) as the one `modelSlug` the runs API, its
aggregates and the site all use.

A registry model is found by its slug, display name, the names Harbor records for it or its
aliases, ignoring case and a provider prefix; any other model gets the slug its text
normalises to (lower case, no provider prefix, words joined by `-`). Text is read in its
compatibility form first (NFKC: full-width `\uff31` is `Q`), and a registry model is also
found by its name with a dot written as a dash (`claude-sonnet-4.5`, as OpenRouter spells
it, is `claude-sonnet-4-5`).
"""

from __future__ import annotations

import re
import unicodedata

from registry.loader import Registry

SLUG = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
MAX_SLUG = 100


def model_slug(registry: Registry, text: str) -> str | None:
    """The one slug of the model `text` names; None only when it holds no letter or digit."""
    wanted = " ".join(unicodedata.normalize("NFKC", text).split()).lower()
    if not wanted:
        return None
    tail = wanted.rsplit("/", 1)[-1].strip()
    candidates = dict.fromkeys((wanted, tail))
    for candidate in candidates:
        known = _known(registry, candidate)
        if known is not None:
            return known
    for candidate in candidates:
        known = _known_loosely(registry, candidate)
        if known is not None:
            return known
    return normalise(tail)


def _names(registry: Registry) -> list[tuple[str, str]]:
    """Each name a registry model is known by, lower-cased, with and without its provider,
    beside the model's slug."""
    pairs = []
    for model in registry.models.values():
        for known in (model.slug, model.name, *model.harbor_names, *model.aliases):
            lowered = known.lower()
            pairs += [(lowered, model.slug), (lowered.rsplit("/", 1)[-1], model.slug)]
    return pairs


def _known(registry: Registry, name: str) -> str | None:
    if name in registry.models:
        return name
    return next((slug for known, slug in _names(registry) if known == name), None)


def _known_loosely(registry: Registry, name: str) -> str | None:
    """The registry model whose name is this one's once both are slugs with dots as dashes:
    `claude-sonnet-4.5` and `Claude Sonnet 4-5` name `claude-sonnet-4-5`."""
    wanted = _loose(name)
    if wanted is None:
        return None
    return next((slug for known, slug in _names(registry) if _loose(known) == wanted), None)


def _loose(name: str) -> str | None:
    slug = normalise(name)
    return slug.replace(".", "-") if slug is not None else None


def normalise(text: str) -> str | None:
    """`Claude Opus 4.8` → `claude-opus-4.8`: lower case, runs of other characters as one
    `-`, a dot kept between letters or digits; None when nothing is left."""
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower())
    slug = re.sub(r"-*\.[.-]*", ".", slug)
    slug = re.sub(r"-{2,}", "-", slug).strip(".-")
    slug = slug[:MAX_SLUG].rstrip(".-")
    return slug if SLUG.match(slug) else None


BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""The characters that reorder the text around them (Unicode's bidi embeddings, overrides,
isolates and marks): in a name, `gpt\u202e5-tset` shows as something else than it is."""
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls, format characters (zero-width spaces and joiners, the byte-order mark, bidi
controls), lone surrogates and line breaks: none shows as itself in a name on a page."""
PROSE_BREAKS = frozenset("\t\n\r")


def hidden_character(text: str, *, prose: bool = False) -> str | None:
    """Why a name can't be shown as it is, or None when it can: the first character that a
    page shows as something else or not at all (`U+202E RIGHT-TO-LEFT OVERRIDE`), or that
    nothing in it shows. Prose (notes, a report) may hold line breaks, tabs and format
    characters but no other control character and no bidi control."""
    for char in text:
        category = unicodedata.category(char)
        hidden = char in BIDI_CONTROLS or (
            category in {"Cc", "Cs"} and char not in PROSE_BREAKS if prose else category in HIDDEN
        )
        if hidden:
            name = unicodedata.name(char, "")
            label = f"U+{ord(char):04X} {name}".rstrip()
            return f"{label} shows as something else on a page, or not at all; leave it out"
    if not prose and not text.strip():
        return "it holds no character a page would show; write a name that shows"
    return None


def shown_name(name: str) -> str:
    """A name as pages show it, refused (ValueError, a request's validation error) when a
    character in it would show as something else or not at all."""
    reason = hidden_character(name)
    if reason is not None:
        raise ValueError(reason)
    return name


def shown_prose(text: str | None) -> str | None:
    """Prose as pages show it (line breaks and tabs allowed), refused as `shown_name` is."""
    reason = hidden_character(text, prose=True) if text is not None else None
    if reason is not None:
        raise ValueError(reason)
    return text

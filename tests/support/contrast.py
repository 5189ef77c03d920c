"""WCAG 2 contrast between two colours, for the site's accessibility checks."""

from __future__ import annotations

import re

Colour = tuple[float, float, float]


def parse_colour(text: str) -> Colour:
    """A CSS colour as the browser computes it (`rgb(…)`, `rgba(…)`) or as written (`#rrggbb`)."""
    text = text.strip()
    if text.startswith("#"):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(d * 2 for d in digits)
        return tuple(int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]
    match = re.fullmatch(r"rgba?\(([^)]*)\)", text)
    if match is None:
        raise ValueError(f"not a colour: {text!r}")
    parts = [float(p) for p in re.split(r"[,\s/]+", match.group(1).strip()) if p]
    if len(parts) == 4 and parts[3] != 1:
        raise ValueError(f"a translucent colour has no single contrast: {text!r}")
    return parts[0] / 255, parts[1] / 255, parts[2] / 255


def luminance(colour: Colour) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: Colour, b: Colour) -> float:
    """The contrast ratio, from 1 (none) to 21 (black on white)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)

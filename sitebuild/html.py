"""HTML from Python, escaped by construction: `html(template, **values)` fills a template's
`{name}` fields, escaping every value unless it is already `Markup` (HTML the site made:
another `html(...)`, a label, a chart). A template is a literal, the site's own markup;
the data goes in through the fields alone, so no text from a record reaches a page
unescaped, and nothing is escaped twice.

Pages are written this way rather than through Jinja where there are thousands of them
(runs and entries): a template spends most of its time per page on its context, macro
calls and the machinery around each expression. Here each template is compiled once,
into a function that is one f-string over its fields, each escaped unless `Markup`
(`docs/site.md`, "What keeps a large build fast").
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from string import Formatter
from typing import LiteralString, cast

from markupsafe import Markup, escape

__all__ = ["NOTHING", "Markup", "const", "html", "join", "template"]

try:
    # The C function behind `escape` for a plain string, without wrapping it in Markup
    # (a call in Python per value); the same characters, the same entities.
    from markupsafe._speedups import _escape_inner as _escape_text
except ImportError:  # pragma: no cover - markupsafe built without its C speedups

    def _escape_text(text: str, /) -> str:
        return str(escape(text))


def html(template: LiteralString, /, **values: object) -> Markup:
    """`template` with each `{name}` replaced by `values[name]`, escaped unless `Markup`.

    `{{` and `}}` are a literal brace. A field takes no format spec or conversion:
    numbers and dates are formatted (`sitebuild.format`) before they go in. Every field
    must be given, and nothing else.
    """
    return _compiled(template)(**values)


def template(text: LiteralString, /) -> Callable[..., Markup]:
    """`text` compiled once, for a template filled thousands of times: call it with the
    fields `html(text, **values)` takes, for the same `Markup` without looking it up."""
    return _compiled(text)


@cache
def const(text: LiteralString, /) -> Markup:
    """The site's own fixed HTML (no field in it), made once: a page takes it many times."""
    return _new(Markup, text)


def join(pieces: Iterable[Markup], separator: LiteralString = "") -> Markup:
    """HTML pieces one after another, as `Markup`: only `Markup` goes in."""
    # str.__new__, as in the templates: Markup's constructor would look for `__html__`.
    return _new(Markup, separator.join(pieces))


_new = str.__new__

NOTHING = Markup()
"""No HTML: what a part of a page that does not apply adds."""


def _escaped(value: object) -> str:
    """A value that is neither text nor `Markup`, escaped: a number's digits as they are."""
    if type(value) is int or type(value) is float:
        return str(value)
    return str(escape(value))


_HELPERS: dict[str, object] = {
    "_str": str,
    "_Markup": Markup,
    "_text": _escape_text,
    "_other": _escaped,
    # Markup's own constructor would look for `__html__` again: the f-string is HTML.
    "_new": _new,
}


@lru_cache(maxsize=1024)
def _compiled(template: str) -> Callable[..., Markup]:
    """The template as a function of its fields: one f-string, the template's literal text
    as it is and each field escaped unless it is `Markup`."""
    pieces, names = [], []
    for literal, name, spec, conversion in Formatter().parse(template):
        pieces.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        if (
            not name.isidentifier()
            or keyword.iskeyword(name)
            or name.startswith("_")
            or spec
            or conversion
        ):
            raise ValueError(f"an html() field is a plain name, not {{{name}...}}")
        pieces.append(
            f"{{({name} if {name}.__class__ is _Markup else _text({name}) "
            f"if {name}.__class__ is _str else _other({name}))}}"
        )
        names.append(name)
    # What the f-string calls comes in as defaults: locals, not a global lookup per field.
    # Fields never start with "_", so none can take their place.
    fields = [*dict.fromkeys(names), *(f"{name}={name}" for name in _HELPERS)]
    source = (
        f"def _template(*, {', '.join(fields)}):\n    return _new(_Markup, f{''.join(pieces)!r})\n"
    )
    scope: dict[str, object] = dict(_HELPERS)
    exec(compile(source, f"<html template {template[:40]!r}>", "exec"), scope)  # noqa: S102 - our own literal templates, their fields checked above
    return cast("Callable[..., Markup]", scope["_template"])

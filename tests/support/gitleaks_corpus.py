"""gitleaks' own true positives, read from its rule generator's Go source.

Each rule in gitleaks' `cmd/generate/config/rules/*.go` lists the strings it must find,
`tps := []string{…}`, and gitleaks' generator checks the rule against them. Some are
literals; most are made when the generator runs, such as
`generateSampleSecret("github", "ghp_"+secrets.NewSecret(alphaNumeric("36")))`, where the
helpers are one-line functions of the same folder and `secrets.NewSecret` makes a random
string that matches a regex (lucasjones/reggen, at a repeat limit of 1).

This module reads that Go source as Go: a lexer, and an evaluator of the expressions the
lists are made of (string literals, `+`, local variables, the folder's one-line helpers
read from the source itself, `fmt.Sprintf`, `secrets.NewSecret`). `secrets.NewSecret` is
reproduced by `reggen` below, with reggen's own repeat rules (not `rstr`'s or `exrex`'s,
which repeat `{60,70}` up to 70 times and `+` up to 100) and a random source seeded by the
rule, so every run makes the same strings. An expression it can't evaluate is reported
with the reason, never guessed.

Each true positive names its secret the way gitleaks 8.16 does: the first match of the
rule's regex in it (from the generated `config/gitleaks.toml` of the same tree), trimmed
of newlines, or its `secretGroup`.
"""

from __future__ import annotations

import random
import re
import re._constants as sre_constants
import re._parser as sre_parse
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

RULES_FOLDER = Path("cmd/generate/config/rules")
GENERATED_CONFIG = Path("config/gitleaks.toml")
UNSHIPPED = (
    "gitleaks 8.16 does not ship the rule (its generator's main.go leaves it out), and the "
    "true positive holds no generated secret to name instead"
)
REGGEN_LIMIT = 1
"""gitleaks' secrets.NewSecret calls reggen's `Generate(1)`."""


class UnsupportedError(ValueError):
    """A Go construct this reader does not evaluate."""


@dataclass(frozen=True)
class TruePositive:
    """One true positive of a gitleaks rule, as its generator would make it."""

    rule: str
    file: str
    index: int
    text: str
    secret: str
    """What gitleaks 8.16 reports as the secret in `text`."""
    generated: tuple[str, ...] = ()
    """The random strings `secrets.NewSecret` made for it: each is part of the key."""
    shipped: bool = True
    """Whether gitleaks 8.16 ships the rule (its generator's main.go leaves a few out).
    For one it doesn't, the secret is the one string `secrets.NewSecret` made."""


@dataclass(frozen=True)
class Skipped:
    """A true positive the reader could not make, and why."""

    rule: str
    file: str
    index: int
    reason: str


@dataclass(frozen=True)
class Corpus:
    true_positives: tuple[TruePositive, ...]
    skipped: tuple[Skipped, ...]
    listed: dict[str, int] = field(default_factory=dict)
    """{rule file: the true positives its `tps` lists hold}, made or not."""

    def per_file(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for tp in self.true_positives:
            counts[tp.file] = counts.get(tp.file, 0) + 1
        return counts


# --- Go's lexer ----------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<raw>`[^`]*`)"""
    r"""|(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<rune>'(?:[^'\\\n]|\\.)+')"""
    r"""|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<number>[0-9][0-9a-zA-Z_.]*)"""
    r"""|(?P<op>:=|\.\.\.|&&|\|\||==|!=|<=|>=|[-+*/%&|^<>=!(){}\[\],.:;])""",
    re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str


def tokens(source: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(source):
        match = _TOKEN.match(source, pos)
        if match is None:
            raise UnsupportedError(f"no Go token at {source[pos : pos + 20]!r}")
        kind = match.lastgroup or ""
        if kind not in ("space", "comment"):
            out.append(Token(kind, match.group()))
        pos = match.end()
    return out


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ESCAPES |= {"\\": "\\", '"': '"', "'": "'"}
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)")


def string_value(token: Token) -> str:
    """A Go string literal's value: raw strings as written (less carriage returns, as Go
    drops them), interpreted ones with their escapes."""
    if token.kind == "raw":
        return token.text[1:-1].replace("\r", "")
    return _ESCAPE.sub(_unescape, token.text[1:-1])


def _unescape(match: re.Match[str]) -> str:
    body = match.group()[1:]
    if body[0] in "xuU":
        return chr(int(body[1:], 16))
    if body[0] in "01234567":
        return chr(int(body, 8))
    if body in _ESCAPES:
        return _ESCAPES[body]
    raise UnsupportedError(f"unknown escape \\{body}")


# --- Go's functions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[str, ...]
    result: str
    body: tuple[Token, ...]


def functions(toks: Sequence[Token]) -> Iterator[Function]:
    """The top-level functions of a file: name, parameter names, result, body."""
    i = 0
    while i < len(toks):
        if toks[i].text != "func" or toks[i + 1].kind != "ident":
            i += 1
            continue
        name = toks[i + 1].text
        close = _closing(toks, i + 2)
        params = _param_names(toks[i + 3 : close])
        brace = next(j for j in range(close, len(toks)) if toks[j].text == "{")
        result = "".join(t.text for t in toks[close + 1 : brace])
        end = _closing(toks, brace)
        yield Function(name, params, result, tuple(toks[brace + 1 : end]))
        i = end + 1


def _closing(toks: Sequence[Token], open_at: int) -> int:
    """The index of the bracket that closes the one at `open_at`."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack: list[str] = []
    for j in range(open_at, len(toks)):
        text = toks[j].text
        if toks[j].kind == "op" and text in pairs:
            stack.append(pairs[text])
        elif toks[j].kind == "op" and stack and text == stack[-1]:
            stack.pop()
            if not stack:
                return j
    raise UnsupportedError("an unclosed bracket")


def _param_names(toks: Sequence[Token]) -> tuple[str, ...]:
    """`identifier string, secret string` -> (identifier, secret)."""
    groups = _split(toks)
    return tuple(group[0].text for group in groups if group)


def _split(toks: Sequence[Token]) -> list[list[Token]]:
    """Tokens split at the commas outside brackets."""
    groups: list[list[Token]] = [[]]
    depth = 0
    for tok in toks:
        if tok.kind == "op" and tok.text in "({[":
            depth += 1
        elif tok.kind == "op" and tok.text in ")}]":
            depth -= 1
        if depth == 0 and tok.text == ",":
            groups.append([])
        else:
            groups[-1].append(tok)
    return [g for g in groups if g] if groups[-1] == [] else groups


# --- Evaluating the expressions the lists are made of ----------------------------------------


@dataclass(frozen=True)
class Value:
    text: str
    generated: tuple[str, ...] = ()

    def __add__(self, other: Value) -> Value:
        return Value(self.text + other.text, self.generated + other.generated)


class Evaluator:
    """Evaluates a Go string expression over the folder's one-line helpers."""

    def __init__(self, helpers: dict[str, Function], rng: random.Random) -> None:
        self.helpers = helpers
        self.rng = rng

    def evaluate(self, toks: Sequence[Token], scope: dict[str, Value]) -> Value:
        terms = self._terms(toks)
        value = Value("")
        for term in terms:
            value = value + self._term(term, scope)
        return value

    @staticmethod
    def _terms(toks: Sequence[Token]) -> list[list[Token]]:
        terms: list[list[Token]] = [[]]
        depth = 0
        for tok in toks:
            if tok.kind == "op" and tok.text in "({[":
                depth += 1
            elif tok.kind == "op" and tok.text in ")}]":
                depth -= 1
            if depth == 0 and tok.kind == "op" and tok.text == "+":
                terms.append([])
            elif tok.kind == "op" and tok.text not in "(){}[],.":
                if depth == 0:
                    raise UnsupportedError(f"the operator {tok.text!r}")
                terms[-1].append(tok)
            else:
                terms[-1].append(tok)
        if any(not term for term in terms):
            raise UnsupportedError("an empty operand")
        return terms

    def _term(self, toks: Sequence[Token], scope: dict[str, Value]) -> Value:
        first = toks[0]
        if len(toks) == 1 and first.kind in ("raw", "string"):
            return Value(string_value(first))
        if len(toks) == 1 and first.kind == "ident":
            if first.text not in scope:
                raise UnsupportedError(f"the name {first.text}")
            return scope[first.text]
        if first.text == "(" and _closing(toks, 0) == len(toks) - 1:
            return self.evaluate(toks[1:-1], scope)
        name, rest = self._callee(toks)
        if not rest or rest[0].text != "(" or _closing(rest, 0) != len(rest) - 1:
            raise UnsupportedError(f"the expression {' '.join(t.text for t in toks)[:60]}")
        args = [self.evaluate(arg, scope) for arg in _split(rest[1:-1])]
        return self._call(name, args)

    @staticmethod
    def _callee(toks: Sequence[Token]) -> tuple[str, Sequence[Token]]:
        if len(toks) > 2 and toks[1].text == "." and toks[2].kind == "ident":
            return f"{toks[0].text}.{toks[2].text}", toks[3:]
        return toks[0].text, toks[1:]

    def _call(self, name: str, args: list[Value]) -> Value:
        if name == "secrets.NewSecret":
            (regex,) = args
            made = reggen(regex.text, self.rng)
            return Value(made, (made,))
        if name == "fmt.Sprintf":
            return sprintf(args[0], args[1:])
        helper = self.helpers.get(name)
        if helper is None:
            raise UnsupportedError(f"the function {name}")
        body = list(helper.body)
        if not body or body[0].text != "return":
            raise UnsupportedError(f"the helper {name}, which is not one return")
        if len(args) != len(helper.params):
            raise UnsupportedError(f"{name} called with {len(args)} arguments")
        return self.evaluate(body[1:], dict(zip(helper.params, args, strict=True)))


_VERB = re.compile(r"%(?:%|[sv])|%.")


def sprintf(template: Value, args: Sequence[Value]) -> Value:
    """Go's fmt.Sprintf for the verbs the rules use: %s, %v, and %%."""
    queue = list(args)
    generated = list(template.generated)

    def verb(match: re.Match[str]) -> str:
        if match.group() == "%%":
            return "%"
        if match.group() not in ("%s", "%v"):
            raise UnsupportedError(f"the verb {match.group()}")
        if not queue:
            raise UnsupportedError("a verb without its argument")
        arg = queue.pop(0)
        generated.extend(arg.generated)
        return arg.text

    text = _VERB.sub(verb, template.text)
    if queue:
        raise UnsupportedError("an argument without its verb")
    return Value(text, tuple(generated))


# --- reggen: a random string that matches a regex ------------------------------------------

PRINTABLE = (
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r"
)
"""reggen's `printableChars`: what a negated class and `.` choose from."""
_CATEGORIES = {
    "CATEGORY_DIGIT": "0123456789",
    "CATEGORY_WORD": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_",
    "CATEGORY_SPACE": "\t\n\f\r ",
}
"""Go's Perl classes are ASCII."""


def reggen(regex: str, rng: random.Random, limit: int = REGGEN_LIMIT) -> str:
    """A string matching `regex`, made as lucasjones/reggen's `Generate(limit)` makes one:
    a class picks uniformly among its characters (a negated one among reggen's printable
    ones), `*` repeats 0 to `limit` times, `+` 1 to `limit`, `?` 0 or 1, and `{m,n}` m
    times plus 0 to min(n, limit) - m more (so at limit 1, `{60,70}` is 60 times)."""
    try:
        parsed = sre_parse.parse(regex)
    except re.error as error:
        raise UnsupportedError(f"the regex {regex!r}: {error}") from error
    return _generate(list(parsed), rng, limit)


def _generate(items: list[tuple[Any, Any]], rng: random.Random, limit: int) -> str:
    return "".join(_one(op, value, rng, limit) for op, value in items)


def _one(op: Any, value: Any, rng: random.Random, limit: int) -> str:  # noqa: PLR0911
    name = str(op)
    if name == "LITERAL":
        return chr(value)
    if name == "IN":
        return rng.choice(_class(value))
    if name == "NOT_LITERAL":
        return rng.choice(PRINTABLE.replace(chr(value), ""))
    if name == "ANY":
        return rng.choice(PRINTABLE[:-2])
    if name == "AT":
        return ""
    if name == "BRANCH":
        return _generate(list(rng.choice(value[1])), rng, limit)
    if name == "SUBPATTERN":
        return _generate(list(value[-1]), rng, limit)
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        low, high, sub = value
        return "".join(
            _generate(list(sub), rng, limit) for _ in range(_times(low, high, rng, limit))
        )
    raise UnsupportedError(f"the regex construct {name}")


def _times(low: int, high: int, rng: random.Random, limit: int) -> int:
    unbounded = high == sre_constants.MAXREPEAT
    if unbounded and low == 0:
        return rng.randint(0, limit)  # `*`
    if unbounded and low == 1:
        return rng.randint(1, limit)  # `+`
    if (low, high) == (0, 1):
        return rng.randint(0, 1)  # `?`
    top = -1 if unbounded else min(high, limit)
    return low + (rng.randint(0, top - low) if top > low else 0)


def _class(items: Any) -> str:
    """The characters of a class, in code-point order, as Go's parser sorts them."""
    chars: set[str] = set()
    negated = False
    for op, value in items:
        kind = str(op)
        if kind == "NEGATE":
            negated = True
        elif kind == "LITERAL":
            chars.add(chr(value))
        elif kind == "RANGE":
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        elif kind == "CATEGORY" and str(value) in _CATEGORIES:
            chars.update(_CATEGORIES[str(value)])
        else:
            raise UnsupportedError(f"the class item {kind} {value}")
    if negated:
        return "".join(c for c in PRINTABLE if c not in chars)
    return "".join(sorted(chars))


# --- The corpus ----------------------------------------------------------------------------


def _helpers(folder: Path) -> dict[str, Function]:
    helpers: dict[str, Function] = {}
    for path in sorted(folder.glob("*.go")):
        for function in functions(tokens(path.read_text(encoding="utf-8"))):
            if function.result == "string":
                helpers[function.name] = function
    return helpers


def _field(body: Sequence[Token], name: str) -> str | None:
    for i, tok in enumerate(body[:-2]):
        if tok.text == name and body[i + 1].text == ":" and body[i + 2].kind in ("raw", "string"):
            return string_value(body[i + 2])
    return None


def _statements(body: Sequence[Token]) -> Iterator[tuple[str, list[Token]]]:
    """`name := expression` at the body's own level, in order."""
    i = 0
    while i < len(body):
        tok = body[i]
        if tok.kind == "op" and tok.text in "({[":
            i = _closing(body, i) + 1
            continue
        if tok.kind == "ident" and i + 1 < len(body) and body[i + 1].text == ":=":
            j = i + 2
            end = j
            while end < len(body) and not _ends_statement(body, end, j):
                end = _closing(body, end) + 1 if body[end].text in "({[" else end + 1
            yield tok.text, list(body[j:end])
            i = end
            continue
        i += 1


def _ends_statement(body: Sequence[Token], at: int, start: int) -> bool:
    """A statement ends where the next begins: `name :=`, `return`, or a keyword."""
    tok = body[at]
    if at > start and tok.kind == "ident" and at + 1 < len(body) and body[at + 1].text == ":=":
        return True
    return tok.text in ("return", "if", "for", "var") or tok.text == ";"


def _listed(expression: list[Token]) -> list[list[Token]] | None:
    """The elements of `[]string{…}`, or None if the expression is something else."""
    texts = [t.text for t in expression[:4]]
    if texts != ["[", "]", "string", "{"] or _closing(expression, 3) != len(expression) - 1:
        return None
    return _split(expression[4:-1])


@dataclass(frozen=True)
class Rule816:
    regex: str
    secret_group: int


def generated_rules(tree: Path) -> dict[str, Rule816]:
    """gitleaks 8.16's rules as its generator wrote them to config/gitleaks.toml."""
    config = tomllib.loads((tree / GENERATED_CONFIG).read_text(encoding="utf-8"))
    return {
        raw["id"]: Rule816(raw["regex"], int(raw.get("secretGroup", 0)))
        for raw in config["rules"]
        if "regex" in raw
    }


def secret_of(text: str, rule: Rule816) -> str | None:
    """The secret gitleaks 8.16 reports in `text` for `rule`: its first match, trimmed
    of newlines, or the rule's `secretGroup` of it (gitleaks' detect.go, detectRule)."""
    regex = re2.compile(rule.regex)
    match = regex.search(text)
    if match is None:
        return None
    secret = match.group().strip("\n")
    if rule.secret_group:
        inner = regex.search(secret)
        if inner is None or inner.group(rule.secret_group) is None:
            return None
        secret = inner.group(rule.secret_group)
    return secret


def load(tree: Path) -> Corpus:
    """Every true positive of every rule in the tree, made or skipped with the reason."""
    folder = tree / RULES_FOLDER
    helpers = _helpers(folder)
    rules = generated_rules(tree)
    made: list[TruePositive] = []
    skipped: list[Skipped] = []
    listed: dict[str, int] = {}
    for path in sorted(folder.glob("*.go")):
        for function in functions(tokens(path.read_text(encoding="utf-8"))):
            if function.result != "*config.Rule":
                continue
            rule_id = _field(function.body, "RuleID") or f"?{function.name}"
            rng = random.Random(f"{path.name}:{function.name}")  # noqa: S311 - test data
            found = _rule_tps(function, Evaluator(helpers, rng), path.name, rule_id, rules)
            for item in found:
                (made if isinstance(item, TruePositive) else skipped).append(item)
            if found:
                listed[path.name] = listed.get(path.name, 0) + len(found)
    return Corpus(tuple(made), tuple(skipped), listed)


def _rule_tps(
    function: Function, evaluator: Evaluator, file: str, rule_id: str, rules: dict[str, Rule816]
) -> list[TruePositive | Skipped]:
    scope: dict[str, Value] = {}
    out: list[TruePositive | Skipped] = []
    for name, expression in _statements(function.body):
        elements = _listed(expression)
        if name == "tps" and elements is not None:
            out += [
                _made(
                    evaluator,
                    element,
                    scope=scope,
                    rule_id=rule_id,
                    file=file,
                    index=index,
                    rules=rules,
                )
                for index, element in enumerate(elements)
            ]
        elif elements is None and name not in ("r", "fps", "tps"):
            try:
                scope[name] = evaluator.evaluate(expression, scope)
            except UnsupportedError:
                continue  # a name no true positive uses stays unknown; one that does fails
    return out


def _made(
    evaluator: Evaluator,
    element: list[Token],
    *,
    scope: dict[str, Value],
    rule_id: str,
    file: str,
    index: int,
    rules: dict[str, Rule816],
) -> TruePositive | Skipped:
    try:
        value = evaluator.evaluate(element, scope)
    except UnsupportedError as error:
        return Skipped(rule_id, file, index, f"can't evaluate {error}")
    rule = rules.get(rule_id)
    if rule is None and len(value.generated) != 1:
        return Skipped(rule_id, file, index, UNSHIPPED)
    secret = value.generated[0] if rule is None else secret_of(value.text, rule)
    if secret is None:
        return Skipped(rule_id, file, index, "gitleaks 8.16's own rule does not match it")
    return TruePositive(
        rule_id, file, index, value.text, secret, value.generated, shipped=rule is not None
    )

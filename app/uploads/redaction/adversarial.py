"""Hostile inputs for a rule set: texts built to make a scanner do more than linear work.

For each rule, from the literal its regex starts with (or its first keyword): a long run
of that prefix; the prefix followed by a long run of the characters keys are made of;
near misses, the prefix and the longest random key that no rule's pattern takes, over
and over. Then, for all rules: BEGIN markers with no END, one BEGIN and no END, random
base64, a run of `eyJ`. `tests/app/uploads/test_redaction_linear.py` checks that each
takes time linear in its size, and `bench/redaction.py` times the slowest.

Texts dense with strings that rules do match but are not keys (`dense()`) are another
kind: each match is checked on its own, which is linear but costs microseconds a match.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass

from .engine import Engine
from .prefilter import literal_prefix

_ALNUM = (string.ascii_letters + string.digits).encode()
_LONGEST_TAIL = 160


@dataclass(frozen=True)
class Adversary:
    """A way to build a hostile text of any size from the parts it repeats."""

    name: str
    parts: tuple[tuple[bytes, bytes], ...]
    """(head, unit) pairs: each part is its head, then its unit repeated, in an equal
    share of the size."""
    matches: bool = False
    """Whether the text may be made of matches: a run of a prefix that its rule matches
    (`glpat-glpat-…`) is checked match by match, which costs microseconds each."""

    def text(self, size: int) -> bytes:
        share = size // len(self.parts)
        out = bytearray()
        for head, unit in self.parts:
            count = max(1, (share - len(head)) // max(1, len(unit)))
            out += head + unit * count
        return bytes(out)


def _key(seed: int) -> bytes:
    rng = random.Random(seed)  # noqa: S311 - reproducible test input, not secrets
    return bytes(rng.choice(_ALNUM) for _ in range(4096))


def seeds(engine: Engine) -> list[tuple[str, bytes]]:
    """(rule id, its literal prefix or first keyword) for each rule, each prefix once."""
    found: dict[bytes, str] = {}
    for compiled in engine.rules:
        rule = compiled.rule
        _, literal, length = literal_prefix(rule.regex)
        prefix = literal.replace("\\", "")
        seed = prefix if length >= 2 else next(iter(rule.keywords), "")
        if len(seed) >= 2:
            found.setdefault(seed.encode("latin-1", "replace"), rule.id)
    return [(rule_id, seed) for seed, rule_id in found.items()]


def near_miss(engine: Engine, prefix: bytes, key: bytes) -> bytes:
    """`prefix` and the longest start of `key` after which no rule's pattern matches (in a
    line of its own): one character short of a match, where a rule takes the prefix; the
    prefix less its last character where the prefix alone is a match."""
    if engine.matching(prefix + b"\n"):
        return prefix[:-1]
    matching = [
        n
        for n in range(1, _LONGEST_TAIL)
        if engine.matching(prefix + key[:n] + b"\n")  # a few thousand bytes in all: cheap
    ]
    return prefix + key[: (matching[0] - 1 if matching else 40)]


def adversaries(engine: Engine, seed: int = 0) -> Iterator[Adversary]:
    key = _key(seed)
    for rule_id, prefix in seeds(engine):
        shown = prefix.decode("latin-1")
        yield Adversary(f"{rule_id}: a run of {shown!r}", ((b"", prefix),), matches=True)
        yield Adversary(f"{rule_id}: {shown!r} then key characters", ((prefix, key),))
        miss = near_miss(engine, prefix, key)
        yield Adversary(f"{rule_id}: near misses of {shown!r}", ((b"", miss + b"\n"),))
    pem = b"-----BEGIN RSA PRIVATE KEY-----\n" + base64.b64encode(key[:48]) + b"\n"
    yield Adversary("BEGIN markers with no END", ((b"", pem),))
    yield Adversary("one BEGIN, no END", ((b"-----BEGIN PRIVATE KEY-----\n", key[:64] + b"\n"),))
    rng = random.Random(seed)  # noqa: S311 - reproducible test input, not secrets
    yield Adversary("random base64", ((b"", base64.b64encode(rng.randbytes(3 * 4096))),))
    yield Adversary("a run of eyJ", ((b"", b"eyJ"),))


def dense(seed: int = 0) -> Iterator[Adversary]:
    """Texts that are nothing but strings rules match: key-shaped but kept (low entropy),
    and assignments of random values, which are redacted."""
    key = _key(seed)
    low = b"ghp_" + b"a1" * 18 + b" "
    yield Adversary("ghp_ tokens of low entropy", ((b"", low),), matches=True)
    assignments = b"".join(b"TOKEN_%d=%s\n" % (i, key[i : i + 40]) for i in range(64))
    yield Adversary("random values assigned to key-like names", ((b"", assignments),), True)

"""Every sentence of the user guides in ../shared/spec/ is accounted for in
docs/guide-promises.md: a promise, with the tests that hold it, or a reason it promises
nothing. The guides are read here, at test time, so a changed guide fails until it is mapped
again; the numbers and rule codes its sentences give are held to the service's own."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

import pytest

from app.reports import policy as reports
from app.runs import schemas as runs
from app.runs.policy import DAY
from app.settings import Settings
from app.v1.aggregates import CACHE_TTL
from hbench.codes import CODE_NAMES
from hbench.limits import MIB
from registry.placement import MAX_ATTEMPTS
from registry.schema import ISSUED_ATTEMPTS
from tests.spec.sentences import GUIDES, ROOT, Sentence, needs_guides, read_guide

DOC = ROOT / "docs" / "guide-promises.md"
RUNS_API_CODES = {"validation_error", "rate_limited"}
"""The runs API's codes, in the skill document's own style (docs/rule-codes.md)."""

pytestmark = needs_guides


@dataclass(frozen=True)
class Promise:
    guide: str
    id: str
    text: str
    tests: tuple[str, ...]


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


@cache
def promises() -> dict[tuple[str, str], Promise]:
    rows = re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{10})` \| (.+?) \| (.+) \|$", doc_text(), re.M)
    found: dict[tuple[str, str], Promise] = {}
    for guide, sid, text, held in rows:
        assert (guide, sid) not in found, f"{guide} {sid} has two rows"
        found[guide, sid] = Promise(guide, sid, text, tuple(re.findall(r"`(tests/[^`]+)`", held)))
    return found


@cache
def silent() -> dict[tuple[str, str], str]:
    """The sentences that promise nothing, each with its one-word reason."""
    found: dict[tuple[str, str], str] = {}
    for guide, items in re.findall(r"^- `([^`]+)`: (.+)\.$", doc_text(), re.M):
        for sid, reason in re.findall(r"`([0-9a-f]{10})` ([a-z-]+)", items):
            assert (guide, sid) not in found, f"{guide} {sid} is listed twice"
            found[guide, sid] = reason
    return found


@cache
def sentences() -> dict[tuple[str, str], Sentence]:
    return {(s.guide, s.id): s for guide in GUIDES for s in read_guide(guide)}


def sentence(sid: str) -> str:
    (found,) = {s.text for (_, i), s in sentences().items() if i == sid}
    return found


def test_every_sentence_of_the_guides_is_accounted_for() -> None:
    accounted = promises().keys() | silent().keys()
    missing = [f"{g} {i}: {s.text}" for (g, i), s in sentences().items() if (g, i) not in accounted]
    assert missing == [], "sentences neither promised nor listed in docs/guide-promises.md"


def test_the_doc_names_no_sentence_the_guides_lack() -> None:
    stale = sorted((promises().keys() | silent().keys()) - sentences().keys())
    assert stale == [], "ids no guide sentence has: the guide changed, map the new sentence"


def test_no_sentence_is_both_a_promise_and_silent() -> None:
    assert sorted(promises().keys() & silent().keys()) == []


def test_the_counts_are_the_tables() -> None:
    for guide in GUIDES:
        rows = [p for p in promises().values() if p.guide == guide]
        ids = {i for g, i in sentences() if g == guide}
        elsewhere = [p for p in rows if any(not t.startswith("tests/spec/") for t in p.tests)]
        new = [p for p in rows if any(t.startswith("tests/spec/") for t in p.tests)]
        line = f"| `{guide}` | {len(ids)} | {len(rows)} | {len(elsewhere)} | {len(new)} |"
        assert line in doc_text().splitlines(), line


def test_every_promise_is_held_by_a_test_that_exists() -> None:
    problems = []
    for promise in promises().values():
        if not promise.tests:
            problems.append(f"{promise.id}: no test")
        problems += [f"{promise.id}: {t}" for t in promise.tests if not is_a_test(t)]
    assert problems == [], "tests named in docs/guide-promises.md that do not exist"


COPIED_WORDS = 8
"""A promise sharing this many words in a row with its sentence copies the guide."""


def test_each_promise_is_in_our_words_not_the_guides() -> None:
    copied = [
        p.id for p in promises().values() if shared_run(p.text, sentences()[p.guide, p.id].text)
    ]
    assert copied == []


def shared_run(ours: str, theirs: str) -> bool:
    def runs(text: str) -> set[tuple[str, ...]]:
        words = [w.strip(".") for w in re.findall(r"[\w@.'/-]+", text.lower())]
        return {tuple(words[i : i + COPIED_WORDS]) for i in range(len(words) - COPIED_WORDS + 1)}

    return bool(runs(ours) & runs(theirs))


def test_a_shared_run_of_words_is_found() -> None:
    assert shared_run(
        "so: one two three four five six seven eight.", "one two three four five six seven eight"
    )
    assert not shared_run(
        "one two three four five six seven", "one two three four five six seven eight"
    )


def test_each_rule_code_a_sentence_names_is_ours_and_its_tests_check_it() -> None:
    problems = []
    for promise in promises().values():
        text = sentences()[promise.guide, promise.id].text
        for code in named_codes(text):
            if code not in CODE_NAMES | RUNS_API_CODES:
                problems.append(f"{promise.id}: {code} is no rule code")
            elif not any(code in module_source(t) for t in promise.tests):
                problems.append(f"{promise.id}: no test of it names {code}")
    assert problems == []


def named_codes(text: str) -> set[str]:
    """Codes as the guides give them: a kebab-case code after "with" or in parentheses, and
    the runs API's codes in backticks."""
    kebab = re.findall(r"(?:with |\()([a-z]+(?:-[a-z]+){2,})(?=[)\s.,]|$)", text)
    snake = set(re.findall(r"`([a-z]+(?:_[a-z]+)+)`", text)) & RUNS_API_CODES
    return set(kebab) | snake


def test_named_codes_are_read_from_the_guides_words() -> None:
    assert named_codes("refuses the upload with local-spec-mismatch.") == {"local-spec-mismatch"}
    assert named_codes("a new result (bench-published-before).") == {"bench-published-before"}
    assert named_codes("HTTP 429, code `rate_limited`.") == {"rate_limited"}
    assert named_codes("such as mini-swe-agent.") == set()


def test_is_a_test_finds_functions_and_methods_and_nothing_else() -> None:
    here = "tests/test_guide_promises.py"
    assert is_a_test(f"{here}::test_is_a_test_finds_functions_and_methods_and_nothing_else")
    assert not is_a_test(f"{here}::test_that_is_not_here")
    assert not is_a_test("tests/nowhere.py::test_x")
    assert not is_a_test(f"{here}::Promise::test_x")


SETTINGS = Settings.model_fields


def default(name: str) -> object:
    return SETTINGS[name].default


def hours(delta: object) -> int:
    assert isinstance(delta, timedelta)
    return int(delta.total_seconds() // 3600)


def number(text: str) -> int:
    return int(text.replace(",", ""))


NUMBERS: dict[str, tuple[str, Callable[[], tuple[object, ...]]]] = {
    # Uploads: the caps, the attempts, the oldest hbench, the run token's life, the window.
    "bcc4c0a17d": (r"up to (\d+) MiB", lambda: (default("upload_max_bytes") // MIB,)),  # type: ignore[operator]
    "f1dc7ca6e0": (
        r"up to (\d+) MiB as sent, and (\d+) MiB unpacked",
        lambda: (default("upload_max_bytes") // MIB, default("unpacked_max_bytes") // MIB),  # type: ignore[operator]
    ),
    "47e90d4e0d": (r"(\d+) to (\d+) attempts per task", lambda: (1, MAX_ATTEMPTS)),
    "5572076d1b": (r"hbench ([\d.]+) or later", lambda: (default("min_hbench_version"),)),
    "5ab18a5dd5": (r"within its (\d+) hours", lambda: (hours(default("run_token_lifetime")),)),
    "4dd8c8b7b3": (r"within (\d+) days", lambda: (default("publish_window").days,)),  # type: ignore[attr-defined]
    # Issuing: the attempts, the token's life, the day, the body's bounds.
    "0ad54469c4": (r"and (\d+) or (\d+) attempts per task", lambda: tuple(ISSUED_ATTEMPTS)),
    "cbbb892da7": (r"within (\d+) hours", lambda: (hours(default("run_token_lifetime")),)),
    "d5a9dfe54f": (r"issued in (\d+) hours", lambda: (hours(DAY),)),
    "905fa233f2": (r"up to ([\d,]+) characters", lambda: (runs.MAX_PROMPT_TEMPLATE_CHARS,)),
    "628b58dfd4": (
        r"Up to (\d+) passages, each up to ([\d,]+) characters",
        lambda: (runs.MAX_EXTRA_INSTRUCTIONS, runs.MAX_EXTRA_INSTRUCTION_CHARS),
    ),
    "54df7df764": (r"Up to (\d+) short fields", lambda: (runs.MAX_HARDWARE_FIELDS,)),
    # Reports.
    "fed77498f0": (
        r"in (\d+) to ([\d,]+) characters",
        lambda: (reports.MESSAGE_MIN, reports.MESSAGE_MAX),
    ),
    "645c046772": (
        r"send (\d+) reports an hour",
        lambda: (
            (default("reports_per_hour"),) if timedelta(hours=1) == reports.REPORT_WINDOW else ()
        ),
    ),
    # The runs API.
    "651330562b": (r"cached (\d+) s", lambda: (int(CACHE_TTL.total_seconds()),)),
    "753e921da4": (
        r"(\d+) pushes per (\d+) h per IP",
        lambda: (default("runs_per_ip_per_day"), 24),
    ),
    "1e3a979575": (
        r"(\d+) pushes per (\d+) h per user",
        lambda: (default("runs_per_user_per_day"), 24),
    ),
}
"""For each sentence giving numbers: where they are in its words, and the service's own."""


@pytest.mark.parametrize("sid", list(NUMBERS))
def test_the_numbers_a_sentence_gives_are_the_services(sid: str) -> None:
    pattern, ours = NUMBERS[sid]
    found = re.search(pattern, sentence(sid))
    assert found is not None, f"{sid} no longer reads {pattern!r}: {sentence(sid)}"
    given = tuple(g if "." in g else number(g) for g in found.groups())
    assert given == tuple(ours())
    assert any(p.id == sid for p in promises().values()), f"{sid} is no promise in the doc"


def is_a_test(node: str) -> bool:
    """Whether `tests/…/file.py::name` (or `::Class::name`) is a test in that file."""
    path, *names = node.split("::")
    file = ROOT / path
    if not file.is_file() or not names:
        return False
    body: list[ast.stmt] = ast.parse(file.read_text()).body
    for name in names:
        found = [
            n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name
        ]
        if not found:
            return False
        body = found[0].body if isinstance(found[0], ast.ClassDef) else []
    return names[-1].startswith("test_")


def module_source(node: str) -> str:
    return (ROOT / node.split("::", maxsplit=1)[0]).read_text()

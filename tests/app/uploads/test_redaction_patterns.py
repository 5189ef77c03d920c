"""The rule set: the vendored gitleaks file parses and names its source, every rule
compiles under both engines, our file's cross-references hold, and the update script
re-imports gitleaks' rules from a git repository as they were vendored."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.uploads.redaction import engine as engine_module
from app.uploads.redaction.engine import Engine, default_engine
from app.uploads.redaction.patterns import (
    GITLEAKS_FILE,
    OWN_FILE,
    RULES_DIR,
    PatternSetError,
    default_patterns,
    load_patterns,
)
from app.uploads.rules import update

HEADER_LINES = 7


def test_the_vendored_file_is_gitleaks_default_config_with_its_source_and_licence() -> None:
    upstream = tomllib.loads(GITLEAKS_FILE.read_text())
    assert upstream["title"] == "gitleaks config"
    assert len(upstream["rules"]) > 200
    patterns = default_patterns()
    assert patterns.upstream_version.startswith("v8.")
    assert len(patterns.upstream_commit) == 40
    licence = (RULES_DIR / "LICENSE-gitleaks").read_text()
    assert licence.startswith("MIT License") and "Zachary Rice" in licence


def test_every_rule_compiles_under_both_engines() -> None:
    engine = default_engine()
    engine.check()  # each rule's own Hyperscan database, beside the one of them all
    patterns = engine.patterns
    ids = {rule.id for rule in patterns.rules}
    upstream = {raw["id"] for raw in tomllib.loads(GITLEAKS_FILE.read_text())["rules"]}
    # Every gitleaks rule is in use, but for those ours replace and those without a regex.
    assert upstream - ids == set(patterns.replaced) | set(patterns.without_regex)
    assert patterns.without_regex == ("pkcs12-file",)


def test_our_rules_are_after_gitleaks_and_the_fallbacks_last() -> None:
    sources = [(rule.source, rule.fallback) for rule in default_patterns().rules]
    assert sources == sorted(sources, key=lambda s: (s[0] == "hbench", s[1]))
    assert all(rule.description for rule in default_patterns().rules)


def test_a_replaced_rule_that_gitleaks_dropped_is_named(tmp_path: Path) -> None:
    own = tmp_path / "hbench.toml"
    own.write_text(OWN_FILE.read_text().replace('"private-key" =', '"private-keys" ='))
    with pytest.raises(PatternSetError, match=r"replaces private-keys, which gitleaks\.toml no"):
        load_patterns(own=own)


def test_a_rule_no_engine_can_read_is_named(tmp_path: Path) -> None:
    own = tmp_path / "hbench.toml"
    broken = '\n[[rules]]\nid = "broken-rule"\nregex = """(a"""\n'
    own.write_text(OWN_FILE.read_text() + broken)
    with pytest.raises(PatternSetError, match=r"rule broken-rule: RE2 can't compile"):
        Engine(load_patterns(own=own))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def gitleaks_repo(path: Path, config: str) -> Path:
    """A git repository laid out as gitleaks' is, with one tagged commit."""
    (path / "config").mkdir(parents=True)
    (path / "config" / "gitleaks.toml").write_text(config)
    shutil.copy(RULES_DIR / "LICENSE-gitleaks", path / "LICENSE")
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "rules")
    git(path, "tag", "v8.99.0")
    return path


def test_the_update_script_reimports_the_rules_as_they_were_vendored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vendored = GITLEAKS_FILE.read_text()
    upstream = vendored.split("\n", HEADER_LINES)[HEADER_LINES]
    repo = gitleaks_repo(tmp_path / "gitleaks", upstream)
    into = tmp_path / "rules"
    into.mkdir()

    assert update.main([str(repo), "--into", str(into)]) == 0

    written = (into / "gitleaks.toml").read_text()
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert written == vendored.replace(default_patterns().upstream_version, "v8.99.0").replace(
        default_patterns().upstream_commit, commit
    )
    assert (into / "LICENSE-gitleaks").read_text() == (RULES_DIR / "LICENSE-gitleaks").read_text()
    assert "v8.99.0" in capsys.readouterr().out


def test_the_update_script_fails_on_a_rule_it_cannot_compile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = GITLEAKS_FILE.read_text().split("\n", HEADER_LINES)[HEADER_LINES]
    upstream += '\n[[rules]]\nid = "new-rule"\nregex = """(?<=x)y"""\nkeywords = ["y"]\n'
    repo = gitleaks_repo(tmp_path / "gitleaks", upstream)
    into = tmp_path / "rules"
    into.mkdir()

    assert update.main([str(repo), "--into", str(into)]) == 1
    assert "rule new-rule: RE2 can't compile" in capsys.readouterr().err


def test_callers_that_come_while_the_engine_compiles_share_it() -> None:
    # Twenty first requests at once compiled twenty engines, a second of CPU each.
    engine_module._default_engine.cache_clear()
    with ThreadPoolExecutor(4) as pool:
        engines = list(pool.map(lambda _: default_engine(), range(4)))
    assert all(e is engines[0] for e in engines)
    assert default_engine() is engines[0]

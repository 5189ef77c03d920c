"""Re-import gitleaks' default rules into `gitleaks.toml` beside this file.

    git clone https://github.com/gitleaks/gitleaks ~/src/gitleaks
    .venv/bin/python -m app.uploads.rules.update ~/src/gitleaks            # its newest tag
    .venv/bin/python -m app.uploads.rules.update ~/src/gitleaks --ref v8.30.1

Reads `config/gitleaks.toml` and `LICENSE` at that ref with `git show` (a bare clone
will do), writes them here with a header naming the version and commit, then loads the
whole rule set and compiles every rule with both engines, so a rule our engines can't
read fails here and not at the first upload. Prints the rules added and removed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = """\
# Vendored from gitleaks, https://github.com/gitleaks/gitleaks, file config/gitleaks.toml.
# upstream-version: {version}
# upstream-commit: {commit}
# Licence: MIT, Copyright (c) 2019 Zachary Rice; the full text is in LICENSE-gitleaks.
# Do not edit by hand: re-import with `python -m app.uploads.rules.update` (docs/redaction.md).
# Our own rules, and the gitleaks rules they replace, are in hbench.toml.
#
"""


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"git {' '.join(args)} failed in {repo}: {result.stderr.strip()}")
    return result.stdout


def newest_tag(repo: Path) -> str:
    tags = git(repo, "tag", "--list", "v*", "--sort=-v:refname").split()
    if not tags:
        sys.exit(f"{repo} has no v* tags: name a ref with --ref")
    return tags[0]


def rule_ids(text: str) -> set[str]:
    return {rule["id"] for rule in tomllib.loads(text).get("rules", [])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone of gitleaks (bare or not)")
    parser.add_argument("--ref", help="tag or commit to import (default: the newest v* tag)")
    parser.add_argument("--into", type=Path, default=HERE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    vendored, licence_file = args.into / "gitleaks.toml", args.into / "LICENSE-gitleaks"
    ref = args.ref or newest_tag(args.repo)
    commit = git(args.repo, "rev-parse", f"{ref}^{{commit}}").strip()
    config = git(args.repo, "show", f"{commit}:config/gitleaks.toml")
    licence = git(args.repo, "show", f"{commit}:LICENSE")
    old = rule_ids(vendored.read_text(encoding="utf-8")) if vendored.exists() else set()
    new = rule_ids(config)
    vendored.write_text(HEADER.format(version=ref, commit=commit) + config, encoding="utf-8")
    licence_file.write_text(licence, encoding="utf-8")

    from app.uploads.redaction.engine import Engine  # noqa: PLC0415 - after the files are written
    from app.uploads.redaction.patterns import PatternSetError, load_patterns  # noqa: PLC0415

    try:
        patterns = load_patterns(gitleaks=vendored)
        Engine(patterns).check()  # every rule, with RE2 and Hyperscan
    except PatternSetError as error:
        print(f"{vendored} is written, but can't be used as it is: {error}", file=sys.stderr)
        return 1
    print(f"gitleaks {ref} ({commit[:12]}): {len(new)} rules, {len(patterns.rules)} in use")
    for label, ids in (("added", new - old), ("removed", old - new)):
        if ids:
            print(f"{label}: {', '.join(sorted(ids))}")
    print("run: .venv/bin/pytest -q tests/app/uploads -k 'redact or rules'")
    return 0


if __name__ == "__main__":
    sys.exit(main())

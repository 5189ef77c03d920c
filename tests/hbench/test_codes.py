"""The rule catalogue: each code declared once, under one area, with a status and a summary;
routes name what they answer by area and by single code."""

from __future__ import annotations

import pytest

from hbench.codes import CATALOGUE, CODE_NAMES, CODES, Area, _index, codes, guide_link, status_of
from hbench.errors import Problem


def test_every_code_is_declared_once_with_its_area_status_and_summary() -> None:
    declared = [code for entries in CATALOGUE.values() for code, _, _ in entries]
    assert len(declared) == len(set(declared)) == len(CODES) == len(CODE_NAMES)
    assert list(CATALOGUE) == list(Area), "every area has its codes, in the docs' order"
    for code, rule in CODES.items():
        assert rule.code == code and code in [c for c, _, _ in CATALOGUE[rule.area]]
        assert 400 <= rule.status < 600, code
        assert rule.summary and "\n" not in rule.summary and not rule.summary.endswith(".")


def test_a_code_declared_twice_is_refused() -> None:
    twice = {Area.JOB: (("job-not-found", 422, "x"),), Area.PACK: (("job-not-found", 422, "y"),)}
    with pytest.raises(ValueError, match="declared twice"):
        _index(twice)


def test_codes_expands_areas_and_keeps_single_codes_once() -> None:
    auth = [code for code, _, _ in CATALOGUE[Area.AUTH]]
    assert codes(Area.AUTH) == tuple(auth)
    both = codes(Area.AUTH, "request-invalid", "auth-required", Area.TOKEN)
    assert both == (*auth, "request-invalid", "token-not-found", "session-required")
    with pytest.raises(ValueError, match="unknown rule code 'no-such-code'"):
        codes(Area.AUTH, "no-such-code")


def test_a_problem_takes_only_catalogued_codes() -> None:
    assert Problem("manifest-file-changed", "changed").code == "manifest-file-changed"
    with pytest.raises(ValueError, match="unknown rule code"):
        Problem("no-such-code", "made up")


def test_status_and_help_come_from_the_catalogue() -> None:
    assert status_of("auth-required") == 401 and status_of("manifest-file-changed") == 422
    assert guide_link("job-unfinished") == "/guide/troubleshooting#job-unfinished"
    assert Area.RUN_TOKEN.anchor == "area-run-token" and Area.JOB.title == "Reading a job folder"

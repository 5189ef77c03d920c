"""Real Harbor jobs of the demo dataset, read by hbench and placed on boards."""

from __future__ import annotations

import pytest

from hbench.jobs.facts import facts_from_job
from hbench.jobs.reader import read_job
from hbench.sandbox import IMPORT_PATH
from registry.loader import load_registry
from registry.placement import EntrySettings, entry_name, place
from registry.scoring import estimate, pass_at_k
from tests.conftest import HarborJobFactory

pytestmark = pytest.mark.harbor


def test_an_oracle_job_goes_on_the_demo_board(harbor_job: HarborJobFactory) -> None:
    facts = facts_from_job(read_job(harbor_job("oracle-k2", "-k", "2")))
    assert facts.dataset == "hbench-demo@1.0"
    assert facts.n_attempts == 2 and len(facts.trials) == 10
    assert facts.environment == IMPORT_PATH
    assert facts.settings == {}
    assert place(facts, load_registry()).fits == ("hbench-demo",)
    rewards: dict[str, list[float | None]] = {}
    for trial in facts.trials:
        rewards.setdefault(trial.task, []).append(trial.reward)
    assert estimate(rewards).mean == pytest.approx(0.8)  # Harbor's own mean for this job
    assert pass_at_k(rewards) == {2: pytest.approx(0.8)}


def test_a_longer_timeout_opens_a_new_board(harbor_job: HarborJobFactory) -> None:
    registry = load_registry()
    facts = facts_from_job(read_job(harbor_job("oracle-slow", "--timeout-multiplier", "2")))
    assert facts.settings["agent_timeout_multiplier"] == 2
    placement = place(facts, registry)
    assert placement.fits == ()
    assert placement.opens is not None
    assert placement.opens.settings == facts.settings
    assert placement.opens.custom_environments == [IMPORT_PATH]


def test_the_nop_agent_shares_the_board_under_another_entry(harbor_job: HarborJobFactory) -> None:
    oracle = facts_from_job(read_job(harbor_job("oracle-k2", "-k", "2")))
    nop = facts_from_job(read_job(harbor_job("nop-1", "-a", "nop")))
    assert place(nop, load_registry()).fits == ("hbench-demo",)
    assert all(t.reward == 0.0 for t in nop.trials)
    name = entry_name("octocat", EntrySettings.of(nop))
    assert name.startswith("nop-") and name != entry_name("octocat", EntrySettings.of(oracle))

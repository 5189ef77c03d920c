"""Placement: the boards a job fits, the board it opens, the entry it joins."""

from __future__ import annotations

import re

import pytest

from registry.loader import Registry, load_registry
from registry.placement import EntrySettings, entry_name, place, slugify
from registry.settings import agent_options, settings_from_config

from .helpers import demo_facts

DIGEST = "sha256:" + "ab" * 32


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def test_a_demo_job_fits_the_demo_board(registry: Registry) -> None:
    placement = place(demo_facts(), registry)
    assert placement.fits == ("hbench-demo",)
    assert placement.opens is None
    assert placement.problems == ()


def test_attempts_do_not_decide_the_board(registry: Registry) -> None:
    assert place(demo_facts(n_attempts=2), registry).fits == ("hbench-demo",)


def test_a_named_subset_fits_its_own_board(registry: Registry) -> None:
    facts = demo_facts(task_names=["sum-numbers", "hello-file"])
    assert place(facts, registry).fits == ("hbench-demo-quick",)


def test_other_settings_open_a_new_board_with_a_stable_slug(registry: Registry) -> None:
    facts = demo_facts(settings={"agent_timeout_multiplier": 2})
    placement = place(facts, registry)
    assert placement.fits == ()
    opened = placement.opens
    assert opened is not None
    assert re.fullmatch(r"hbench-demo-1.0-none-[0-9a-f]{6}", opened.slug)
    assert opened.benchmark == "hbench-demo"
    assert opened.custom_environments == registry.benchmarks["hbench-demo"].custom_environments
    again = place(demo_facts(settings={"agent_timeout_multiplier": 2}, job_id="other"), registry)
    assert again.opens is not None and again.opens.slug == opened.slug
    # Once open, the next job of the same cell fits it instead of opening another.
    assert place(facts, registry, [opened]).fits == (opened.slug,)


def test_a_different_task_set_opens_a_new_board(registry: Registry) -> None:
    placement = place(demo_facts(task_names=["count-lines"]), registry)
    assert placement.opens is not None
    assert placement.opens.tasks == ["count-lines"]


def test_an_unknown_model_opens_a_board_named_after_it(registry: Registry) -> None:
    facts = demo_facts(model="anthropic/claude-opus-4-8", agent="terminus-2", environment="docker")
    placement = place(facts, registry)
    assert placement.opens is not None
    assert placement.opens.model == "anthropic-claude-opus-4-8"


def test_a_known_model_is_matched_by_its_harbor_name(registry: Registry) -> None:
    facts = demo_facts(
        dataset="humanevalfix@1.0",
        task_names=[f"t{i}" for i in range(164)],
        model="hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct",
        agent="terminus-2",
        environment="docker",
    )
    assert place(facts, registry).fits == ("humanevalfix-qwen2.5-coder-7b",)
    # 163 tasks are not the whole dataset: that is a cell of its own.
    fewer = facts.model_copy(update={"task_names": facts.task_names[:-1]})
    assert place(fewer, registry).opens is not None


def test_the_demo_sandbox_is_refused_on_other_benchmarks(registry: Registry) -> None:
    facts = demo_facts(
        dataset="humanevalfix@1.0",
        task_names=[f"t{i}" for i in range(164)],
        model="openai/Qwen/Qwen2.5-Coder-7B-Instruct",
    )
    placement = place(facts, registry)
    assert placement.fits == ()
    assert placement.opens is None
    assert [p.code for p in placement.problems] == ["board-environment-refused"]
    unknown = facts.model_copy(update={"dataset": "something-else@1.0"})
    assert [p.code for p in place(unknown, registry).problems] == ["board-environment-refused"]


def test_refusals_are_all_reported(registry: Registry) -> None:
    facts = demo_facts(dataset=None, n_attempts=6, prompt_template_digest=DIGEST)
    placement = place(facts, registry)
    assert [p.code for p in placement.problems] == [
        "board-local-tasks",
        "board-attempts-refused",
        "board-prompt-needs-issued-run",
    ]
    assert placement.fits == () and placement.opens is None


def test_entry_names_are_stable_and_ignore_the_agent_version() -> None:
    settings = EntrySettings(agent="terminus-2", options={"temperature": 0})
    name = entry_name("Octocat", settings)
    assert re.fullmatch(r"terminus-2-[0-9a-f]{6}", name)
    assert entry_name("octocat", settings) == name
    assert entry_name("someone-else", settings) != name
    other = EntrySettings(agent="terminus-2", options={"temperature": 1})
    assert entry_name("octocat", other) != name
    with_prompt = EntrySettings(agent="terminus-2", options={"temperature": 0},
                                prompt_template_digest=DIGEST)  # fmt: skip
    assert entry_name("octocat", with_prompt) != name
    from_facts = EntrySettings.of(demo_facts(agent_version="9.9.9"))
    assert from_facts == EntrySettings.of(demo_facts(agent_version="1.0.0"))


def test_settings_from_config_keeps_only_what_differs_from_the_defaults() -> None:
    assert settings_from_config({}) == {}
    assert settings_from_config({"timeout_multiplier": 1.0, "environment": {"delete": False}}) == {}
    global_two = settings_from_config({"timeout_multiplier": 2.0})
    per_phase = settings_from_config(
        {f"{phase}_timeout_multiplier": 2 for phase in
         ("agent", "verifier", "agent_setup", "environment_build")}
    )  # fmt: skip
    assert global_two == per_phase
    assert global_two["agent_timeout_multiplier"] == 2
    config = {
        "environment": {"override_cpus": 4, "extra_allowed_hosts": ["b.example", "a.example"]},
        "agents": [{"name": "x", "override_timeout_sec": 900.0}],
        "verifier": {"disable": True},
    }
    assert settings_from_config(config) == {
        "environment.override_cpus": 4,
        "environment.extra_allowed_hosts": ["a.example", "b.example"],
        "agent.override_timeout_sec": 900,
        "verifier.disable": True,
    }


def test_agent_options_drop_the_version_and_template_path() -> None:
    agent = {
        "kwargs": {"version": "1.2.3", "prompt_template_path": "prompts/p.j2", "max_turns": 50},
        "skills": ["b", "a"],
    }
    assert agent_options(agent) == {"max_turns": 50, "skills": ["a", "b"]}


def test_slugify_makes_valid_slugs() -> None:
    assert slugify("terminal-bench@2.0") == "terminal-bench-2.0"
    assert slugify("Org/Name..v1") == "org-name.v1"
    assert slugify("a.@b") == "a-b"

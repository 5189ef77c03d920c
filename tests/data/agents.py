"""Tiny Harbor agents for tests: they crash on purpose, so real jobs hold errors and retries.

Harbor imports them as `tests.data.agents:<Class>` in its own process, so the
repository's root must be on that process's PYTHONPATH. Both report token and
cost counts as a model-backed agent would, so jobs carry real totals.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.agents.oracle import OracleAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.trial.paths import TrialPaths

# What each agent run reports, so tests can check the totals Harbor adds up.
INPUT_TOKENS = 120
CACHE_TOKENS = 20
OUTPUT_TOKENS = 30
COST_USD = 0.25
# Longer than any test waits before interrupting a `SlowAgent` job.
SLOW_SECONDS = 120


def _report_usage(context: AgentContext) -> None:
    context.n_input_tokens = INPUT_TOKENS
    context.n_cache_tokens = CACHE_TOKENS
    context.n_output_tokens = OUTPUT_TOKENS
    context.cost_usd = COST_USD


class ScriptedAgent(BaseAgent):
    """What these agents share: a version of their own and nothing to set up."""

    def version(self) -> str:
        return "0.1.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        return None


class FlakyAgentError(RuntimeError):
    """Raised by `FlakyAgent`; not in Harbor's default retry exclusions, so it is retried."""


class FlakyAgent(ScriptedAgent):
    """Crashes the first time it meets each task in a job, then solves it like the oracle.

    With `--max-retries 1` every trial crashes once and is retried; with `-k 2`
    one trial of each task crashes and the other runs. The marker "met this
    task" is kept per job id beside the dataset's `tasks/` folder: not in the
    trial's folder, which Harbor deletes before a retry, and not in the job's,
    so a copy of the job resumed elsewhere still remembers.
    """

    @staticmethod
    def name() -> str:
        return "flaky"

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        _report_usage(context)
        trial_dir = Path(self.logs_dir).resolve().parent
        # Harbor gives only its own oracle the task's folder; the trial's config names it.
        config = json.loads((trial_dir / "config.json").read_text())
        task_dir = Path(config["task"]["path"])
        marker = task_dir.parent.parent / ".flaky-markers" / config["job_id"] / task_dir.name
        marker.parent.mkdir(parents=True, exist_ok=True)
        try:
            marker.touch(exist_ok=False)  # atomic: one trial per task wins, even concurrently
        except FileExistsError:
            oracle = OracleAgent(
                logs_dir=self.logs_dir, task_dir=task_dir, trial_paths=TrialPaths(trial_dir)
            )
            await oracle.run(instruction, environment, context)
            return
        raise FlakyAgentError(f"first meeting with {task_dir.name} crashes on purpose")


class BrokenAgentError(RuntimeError):
    """Raised by `BrokenAgent` on every attempt."""


class BrokenAgent(ScriptedAgent):
    """Crashes on every attempt, after reporting its usage, so no trial gets a reward."""

    @staticmethod
    def name() -> str:
        return "broken"

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        _report_usage(context)
        raise BrokenAgentError("this agent always crashes")


class SlowAgent(ScriptedAgent):
    """Sleeps far longer than a test waits, so a test can interrupt a running job."""

    @staticmethod
    def name() -> str:
        return "slow"

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        await asyncio.sleep(SLOW_SECONDS)

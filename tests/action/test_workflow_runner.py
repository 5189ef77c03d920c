"""The local workflow runner's expressions, as the reusable workflow uses them: GitHub's
short-circuiting `&&` and `||`, loose comparison, and the functions it calls."""

from __future__ import annotations

from typing import Any

import pytest

from tests.action.runner import UnsupportedError
from tests.action.workflow_runner import render

CONTEXTS: dict[str, Any] = {
    "inputs": {
        "runs-on": "ubuntu-latest",
        "shard-runs-on": '["self-hosted", "x64"]',
        "shards": 3,
        "shard-timeout-minutes": 0,
        "timeout-minutes": 360,
        "resume": "",
        "upload": True,
    },
    "needs": {"issue": {"result": "success", "outputs": {"shards": '[{"index": 1}]'}}},
    "secrets": {},
}
SHARD_RUNS_ON = (
    "${{ inputs.shard-runs-on != '' && (startsWith(inputs.shard-runs-on, '[') && "
    "fromJSON(inputs.shard-runs-on) || inputs.shard-runs-on) || (startsWith(inputs.runs-on, "
    "'[') && fromJSON(inputs.runs-on) || inputs.runs-on) }}"
)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        (SHARD_RUNS_ON, ["self-hosted", "x64"]),
        # fromJSON('ubuntu-latest') is never evaluated: && stops at a false left side.
        ("${{ startsWith(inputs.runs-on, '[') && fromJSON(inputs.runs-on) || inputs.runs-on }}",
         "ubuntu-latest"),
        ("${{ inputs.shard-timeout-minutes > 0 && inputs.shard-timeout-minutes || "
         "inputs.timeout-minutes }}", 360),
        ("${{ always() && inputs.shards > 1 && needs.issue.result == 'success' }}", True),
        ("${{ fromJSON(needs.issue.outputs.shards) }}", [{"index": 1}]),
        ("${{ inputs.resume != '' && 'hbench-runs' || '' }}", ""),
        ("${{ inputs.shards <= 1 }}", False),
        ("${{ !inputs.upload }}", False),
        ("${{ needs.missing.outputs.x == '' }}", True),  # a missing property is null
        ("shard ${{ needs.issue.outputs.shards }} of ${{ inputs.shards }}",
         'shard [{"index": 1}] of 3'),
    ],
)  # fmt: skip
def test_expressions_evaluate_as_github_evaluates_them(expression: str, value: Any) -> None:
    assert render(expression, CONTEXTS, keep_steps=False) == value


def test_step_expressions_are_left_for_the_action_runner() -> None:
    kept = "${{ steps.issue.outputs.shards }}"
    assert render(kept, CONTEXTS) == kept


def test_what_it_does_not_evaluate_is_refused_not_guessed() -> None:
    with pytest.raises(UnsupportedError):
        render("${{ hashFiles('x') }}", CONTEXTS)
    with pytest.raises(UnsupportedError):
        render("${{ vars.NAME }}", CONTEXTS)

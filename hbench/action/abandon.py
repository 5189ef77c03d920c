"""What becomes of an issued run whose attempt failed or was cancelled: the run and upload
steps abandon it (`POST /api/local-runs/{run_id}/abandon`, with the `api-token` input or
else a fresh OIDC token of the job, as the run was issued; never with the run token, which
serves its one upload only), freeing its slot on the board at once; or, with
`on-failure: keep`, it stays issued for a resume until it expires, and a notice says how to
abandon it by hand. The reusable workflow keeps it, since it saves the run for its `resume`
input.

A step used alone without the issue step's `token-file` (an upload with `api-token` of a
job never issued) has no run to give up.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

import httpx

from hbench import __version__
from hbench.action.oidc import id_token_available, request_id_token
from hbench.action.protocol import Actions, Inputs
from hbench.errors import HbenchError
from hbench.issue import RUN_FILE, RUNS_PATH

ABANDON, KEEP = "abandon", "keep"
TIMEOUT = httpx.Timeout(3.0)
"""Short: a cancelled step has 7.5 s from the runner's SIGINT to its SIGTERM, for the OIDC
token's request and the abandoning both."""
TITLE = "hbench: the failed run"


def policy(inputs: Inputs) -> str:
    """The `on-failure` input: `abandon` (the default) or `keep`."""
    value = (inputs.get("on-failure") or ABANDON).lower()
    if value not in {ABANDON, KEEP}:
        message = f"the input `on-failure` must be {ABANDON} or {KEEP}, not {value!r}"
        raise HbenchError("action-input-invalid", message)
    return value


def issued_run(inputs: Inputs) -> tuple[str, str, str] | None:
    """The failed attempt's run: its id, board and run token; None when the step has none."""
    token_file, run_dir = inputs.get("token-file"), inputs.get("run-dir")
    if token_file is None or run_dir is None:
        return None
    try:
        token = Path(token_file).read_text(encoding="utf-8").strip()
        details = json.loads((Path(run_dir) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not token or not isinstance(details, dict) or not details.get("run_id"):
        return None
    return str(details["run_id"]), str(details.get("board") or "its board"), token


def give_up(actions: Actions, inputs: Inputs, chosen: str, environ: Mapping[str, str]) -> None:
    """After a failed attempt: abandon its run, or say it is kept and how to abandon it."""
    found = issued_run(inputs)
    service_url = inputs.get("service-url")
    if found is None or service_url is None:
        return
    run_id, board, run_token = found
    actions.mask(run_token)
    by_hand = f"`hbench runs abandon {run_id}`"
    if chosen == KEEP:
        actions.notice(
            TITLE,
            f"the run {run_id} stays issued on {board}, holding a slot there until it is "
            f"resumed, uploaded or expired (on-failure: keep); if you won't resume it, free "
            f"the slot with {by_hand}",
        )
        return
    try:
        token = credential(inputs, environ, service_url)
    except HbenchError as error:
        why = error.detail
        actions.warning(
            TITLE, f"the run {run_id} could not be abandoned ({why}); abandon it with {by_hand}"
        )
        return
    actions.mask(token)
    url = f"{service_url.rstrip('/')}{RUNS_PATH}/{quote(run_id, safe='')}/abandon"
    headers = {"authorization": f"Bearer {token}", "user-agent": f"hbench/{__version__}"}
    try:
        with httpx.Client(timeout=TIMEOUT) as client:
            answer = client.post(url, headers=headers)
    except httpx.HTTPError as exc:
        why = f"the service did not answer ({exc.__class__.__name__})"
    else:
        if answer.is_success:
            actions.notice(TITLE, f"abandoned the run {run_id}: its slot on {board} is free")
            return
        why = f"the service answered HTTP {answer.status_code}: {service_problem(answer)}"
    actions.warning(
        TITLE, f"the run {run_id} could not be abandoned ({why}); abandon it with {by_hand}"
    )


def credential(inputs: Inputs, environ: Mapping[str, str], service_url: str) -> str:
    """The `api-token` input, else a fresh OIDC token of the job (`id-token: write`)."""
    if (api_token := inputs.get("api-token")) is not None:
        return api_token
    if not id_token_available(environ):
        raise HbenchError(
            "action-oidc-unavailable",
            "the step has neither the `api-token` input nor the job's OIDC token to abandon "
            "it with",
        )
    return request_id_token(environ, service_url, timeout=TIMEOUT)


def service_problem(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return answer.text[:200]
    if isinstance(body, dict) and body.get("detail"):
        return f"{body['detail']} ({body.get('code')})"
    return answer.text[:200]

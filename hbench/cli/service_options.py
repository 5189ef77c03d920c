"""The options every command that calls the service shares: its address and the API token."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from hbench.errors import HbenchError

UrlOption = Annotated[
    str,
    typer.Option(
        "--url", help="The service's base address, such as https://hbench.example (no /api/…)."
    ),
]
TokenEnvOption = Annotated[
    str | None,
    typer.Option(
        "--token-env",
        help="The variable holding your API token (hpg_…). Leave it out for a service on "
        "this machine in local mode, which signs in its local user.",
    ),
]


def token_from_env(token_env: str | None, missing_code: str) -> str | None:
    """The API token the named variable holds; None when no variable was named (a local
    service signs in its local user). A named but empty variable is an error."""
    if token_env is None:
        return None
    token = os.environ.get(token_env, "").strip()
    if not token:
        message = (
            f"the variable {token_env} is unset or empty; set it to your API token "
            f"(export {token_env}=hpg_…), or leave --token-env out for a local service"
        )
        raise HbenchError(missing_code, message)
    return token

"""`hbench-app github-app`: the GitHub App's manifest, and making the App from it."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from app.github.manifest import app_manifest
from app.github.oauth import web_url
from app.github.setup import DONE_PATH, ManifestFlow
from app.settings import load_settings
from hbench.cli.output import handled

github_app = typer.Typer(help="Make the service's GitHub App.", no_args_is_help=True)

PublicUrl = Annotated[
    str, typer.Option("--public-url", help="The service's public address (HBENCH_PUBLIC_URL).")
]
Name = Annotated[str, typer.Option("--name", help="The App's name on GitHub (unique there).")]


@github_app.command("manifest")
def manifest(
    public_url: PublicUrl,
    name: Name = "hbench",
    redirect_url: Annotated[
        str | None, typer.Option("--redirect-url", help="Where GitHub returns the code.")
    ] = None,
) -> None:
    """Print the App's manifest: its webhook and sign-in addresses, the permissions and the
    events it needs (docs/deployment.md)."""
    redirect = redirect_url or f"http://127.0.0.1{DONE_PATH}"
    with handled():
        print(json.dumps(app_manifest(public_url, name=name, redirect_url=redirect), indent=2))


@github_app.command("create")
def create(
    public_url: PublicUrl,
    *,
    name: Name = "hbench",
    org: Annotated[
        str | None, typer.Option("--org", help="Make the App under this organisation.")
    ] = None,
    env_file: Annotated[
        Path, typer.Option("--env-file", help="Where the App's settings are written.")
    ] = Path("hbench-github-app.env"),
    port: Annotated[int, typer.Option("--port", help="The loopback port (0: any free one).")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait.")] = 900.0,
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="Open the page in a browser.")
    ] = True,
) -> None:
    """Make the GitHub App with GitHub's manifest flow: a page on loopback sends the
    manifest to GitHub from your browser; GitHub makes the App and hands its id, private
    key, webhook secret and OAuth client back once, into ENV_FILE (readable by you alone)."""
    with handled():
        settings = load_settings()
        flow = ManifestFlow(
            public_url=public_url, name=name, org=org, web_url=web_url(settings),
            api_url=settings.github_api_url, env_file=env_file, port=port,
        )  # fmt: skip
        if browser:
            webbrowser.open(flow.address + "/")
        made = flow.run(timeout=timeout, announce=print)
    print(f"made {made.html_url}; its settings are in {env_file}")
    print(f"next: install it on the data repository ({made.html_url}/installations/new)")

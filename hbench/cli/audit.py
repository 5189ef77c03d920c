"""`hbench audit`: check a data repository's boards from its own files, without the service."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from hbench.cli.output import console, handled, print_problems


def audit_command(
    data_repo: Annotated[
        Path,
        typer.Option("--data-repo", help="A clone of the data repository (default: this folder)."),
    ] = Path(),
    *,
    site: Annotated[
        Path | None,
        typer.Option(
            "--site",
            help="A built site to check too (default: the clone's _site/, when it has one).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON, every difference in it.")
    ] = False,
    trusted_root: Annotated[
        Path | None,
        typer.Option(
            "--trusted-root",
            help="The Sigstore trusted root runs' signatures are checked against (default: "
            "Sigstore's public root, as the installed sigstore-python ships it).",
        ),
    ] = None,
    issuer: Annotated[
        str,
        typer.Option("--issuer", help="The OIDC issuer a signer's identity must come from."),
    ] = "https://token.actions.githubusercontent.com",
    workers: Annotated[
        int,
        typer.Option("--workers", min=1, help="Processes that build the sites (default: CPUs)."),
    ] = os.cpu_count() or 1,
) -> None:
    """Recompute every board from a clone of the data repository and report what differs.

    Every row, field and run that its rows.json or its site shows otherwise is named.

    Each board's rows (scores, intervals, rank groups, counts) are recomputed from its runs
    as the service's writer does, and the site is built as the Pages workflow builds it,
    once from the clone and once from the recomputed rows, and the two compared: boards,
    entries, runs, the reproduced panels and the leaderboard. Each run's record is checked
    on its own: its manifest digest, its rewards against its attempts and trials, and its
    evidence (run on CI, issued, regraded, tasks pinned) against what each needs. A signed
    run's Sigstore bundle is checked offline against the trusted root: it must sign the
    run's manifest digest as the workflow its provenance names. Nothing is asked of the
    service, or of Sigstore.

    Exits 0 when everything agrees and 1 otherwise, printing each difference with its rule
    code (docs/site.md, "Auditing").
    """
    # The audit is the site builder's (sitebuild.audit): imported when it runs.
    from sitebuild.audit import SignaturePolicy, audit_data_repo  # noqa: PLC0415

    with handled():
        signing = SignaturePolicy(trusted_root, issuer)
        report = audit_data_repo(data_repo, site=site, workers=workers, signing=signing)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print_problems(d.problem() for d in report.differences)
        checked = (
            f"{report.boards} boards, {report.entries} entries, {report.runs} runs; "
            f"sites: {', '.join(report.sites)}"
        )
        if report.agrees:
            console.print(f"[green]✓[/green] {data_repo}: every board agrees with its runs "
                          f"({checked})")  # fmt: skip
        else:
            console.print(
                f"[red]✗[/red] {data_repo}: {len(report.differences)} differences ({checked})"
            )
    if not report.agrees:
        raise typer.Exit(code=1)

"""`hbench-app site build`: the builder from the service's command line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from app.cli import app as cli

from .conftest import SERVICE


def test_the_cli_builds_the_site(data_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    args = ["site", "build", "--data-repo", str(data_repo), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--service-url", SERVICE])
    assert result.exit_code == 0, result.output
    assert "full build" in result.output and (out / "index.html").is_file()
    again = CliRunner().invoke(cli, [*args, "--service-url", SERVICE])
    assert "(rebuild): 0 parts rendered" in again.output
    refused = CliRunner().invoke(
        cli, ["site", "build", "--data-repo", str(tmp_path), "--out", str(out)]
    )
    assert refused.exit_code == 1 and "(site-data-invalid)" in refused.output

"""`python -m app.regrade work`: the regrade worker, as `hbench-app regrade work` runs it."""

from app.regrade.cli import regrade

regrade(prog_name="python -m app.regrade")

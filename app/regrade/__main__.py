"""`python -m app.regrade work`: the regrade worker, as `hbench-app regrade work` runs it."""

from app.regrade.cli import regrade
from hbench.quick_exit import skip_last_collections

skip_last_collections()

regrade(prog_name="python -m app.regrade")

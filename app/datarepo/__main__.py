"""`python -m app.datarepo write --once`: the writer without the rest of the service's
command, so a script (or the crash test, which starts it many times) pays for less import."""

from app.datarepo.cli import data_repo
from hbench.quick_exit import skip_last_collections

skip_last_collections()

data_repo(prog_name="python -m app.datarepo")

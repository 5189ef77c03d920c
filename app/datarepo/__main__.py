"""`python -m app.datarepo write --once`: the writer without the rest of the service's
command, so a script (or the crash test, which starts it many times) pays for less import."""

from app.datarepo.cli import data_repo

data_repo(prog_name="python -m app.datarepo")

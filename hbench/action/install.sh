#!/usr/bin/env bash
# Install hbench from the Action's own checkout into the job's Python, unless that Python
# already has this very version (a runner image or an earlier step may have installed it).
set -euo pipefail
source_dir="$1"
want="$(python -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$source_dir/pyproject.toml")"
# -P: the working directory is not on the path, so a checkout of hbench in the workspace
# is not mistaken for the installed package.
have="$(python -P -c 'import hbench.action, hbench; print(hbench.__version__)' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  python -m pip install --quiet --disable-pip-version-check "$source_dir"
fi
python -P -c 'import hbench; print("hbench", hbench.__version__)'

"""The steps of hbench's GitHub Action: issue a run, run it in the runner image, upload it.

Each step is a module with `main(argv) -> int`, run as `python -m hbench.action.<step>`
from the Action's YAML, which only passes its inputs through `env:`.
"""

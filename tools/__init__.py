"""Set-up of the machine the tests, the demo and the benchmarks run on (Docker), used by
`make`, `tests/conftest.py` and `bench/`. Not part of the distribution: pyproject.toml
ships `hbench`, `registry` and `app` only."""

"""Pulling a registry benchmark onto this machine: Harbor task folders made from dataset
rows (`hf_rows`), a shallow clone of a task repository, or the instructions of a benchmark
Harbor can't run (`hbench registry pull`, `docs/registry.md`)."""

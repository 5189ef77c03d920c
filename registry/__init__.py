"""The benchmark registry: its schema and default data, the demo dataset, boards and cells,
scoring, and the data repository's layout with its pure state changes. No web or database
code, and of hbench only its errors and rule codes.

`docs/registry.md` documents the registry's files field by field;
`docs/data-repository.md` documents the data repository.
"""

"""The benchmark registry: its schema and default data, boards and cells, scoring, and
the data repository's layout with its pure state changes. No web or database code.

`docs/registry.md` documents the registry's files field by field;
`docs/data-repository.md` documents the data repository.
"""

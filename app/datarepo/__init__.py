"""The data-repository writer: the outbox of public changes, and the process that commits
them to the data repository's git history exactly once (`docs/data-repository.md`, "How
the writer works")."""

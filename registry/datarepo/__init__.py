"""The data repository: its layout, the records it holds, and the pure state changes the
data-repo writer commits. `docs/data-repository.md` documents it."""

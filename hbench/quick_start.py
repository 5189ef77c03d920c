"""Loading a command's modules without the garbage collections their loading sets off.

Importing FastAPI, SQLAlchemy, pydantic and the service's own models makes hundreds of
thousands of objects and no garbage, yet the collector counts them and walks them all
in each full collection it runs meanwhile: some 0.2 s of the 1.2 s `hbench-app` takes
to import. Importing this module, first thing in a command's module, turns the
collector off; `loaded()`, once that module's imports are done, freezes every object
made so far (the collector never looks at them again: they live as long as the process)
and turns it back on, as the `gc.freeze` documentation advises for what a program
loads at start. `loading()` does the same around a block of imports, for a module
imported after the collector is on again (the upload workers' fork server, `app.bench.warm`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

gc.disable()


def loaded() -> None:
    """The command's modules are loaded: keep them out of the collector's sight, and
    collect from here on as usual."""
    gc.freeze()
    gc.enable()


@contextmanager
def loading() -> Iterator[None]:
    """The block's imports load with the collector off; what they made is frozen after."""
    gc.disable()
    try:
        yield
    finally:
        loaded()

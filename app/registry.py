"""The registry the service issues runs against, as a dependency tests can replace.

For now it is the default registry shipped in `registry/data/`, parsed once per process;
a deployment's registry in its data repository can take its place behind `get_registry`.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated

from fastapi import Depends

from registry.loader import Registry, load_registry


@cache
def default_registry() -> Registry:
    """The registry shipped with hbench, read and parsed on first use."""
    return load_registry()


async def get_registry() -> Registry:
    """The registry handlers see. A FastAPI dependency: tests override it. Parsed once
    and only handed over here, so `async`: no hop to the thread pool per request."""
    return default_registry()


RegistryDep = Annotated[Registry, Depends(get_registry)]

"""What the upload workers' fork server (`app.bench.pool`) imports before it forks a
worker: the upload code, and the redaction engine made (its patterns compiled, or read
back where this machine keeps them: `app/uploads/redaction/compiled.py`), once for every
worker it forks, which share its memory rather than each making their own."""

from __future__ import annotations

from app.bench import service
from app.uploads.redaction.engine import default_engine

__all__ = ["service"]

default_engine()

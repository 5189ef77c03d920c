"""What the upload workers' fork server (`app.bench.pool`) imports before it forks a
worker: the upload code, and the redaction engine made (its patterns compiled, or read
back where this machine keeps them: `app/uploads/redaction/compiled.py`), once for every
worker it forks, which share its memory rather than each making their own.

The collector is off while it loads, and what it loaded is then frozen
(`hbench.quick_start.loading`): none of it is garbage, yet each full collection while
importing walked all that came before (a fifth of the fork server's start), and every
collection in a worker would walk it again, writing to each object's page and so copying
the memory the workers share. This is the
order the `gc.freeze` documentation gives for a process that forks without exec.
"""

from __future__ import annotations

from hbench.quick_start import loading

with loading():
    from app.bench import service
    from app.uploads.redaction.engine import default_engine

    default_engine()

__all__ = ["service"]

"""Running Harbor tasks without Docker, for the demo and the tests only.

`hbench.sandbox.environment:BubblewrapEnvironment` is a Harbor environment
class: each trial gets its own folder, mapped into a bubblewrap sandbox at the
container paths tasks expect (`/app`, `/logs/...`, `/tests`, `/solution`).
A job run this way records `environment.import_path` in its `config.json`, so
the service can keep it off every board but the demo's.
"""

IMPORT_PATH = "hbench.sandbox.environment:BubblewrapEnvironment"

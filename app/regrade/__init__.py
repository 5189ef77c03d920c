"""Regrading uploaded jobs: the service runs the tasks' own verifiers again on the outputs a
job recorded, and compares the rewards with the ones the job claims.

`plan` decides at upload whether a job can be regraded (its tasks' verifiers run apart
from the agent, the service has the task files it ran, redaction left its outputs as they
were); `worker` is the separate process that claims queued regrades, runs
`harbor job regrade` in a sandbox and records what it found (`compare`); `service` is what
uploads, publishing and pages ask of a job's regrade. `docs/trust.md` says what a regrade
proves.
"""

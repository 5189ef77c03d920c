"""The checks an uploaded job must pass, and what the service keeps of it, as pure functions.

`rules` is the rule table (every failure, not the first), `spec_match` compares a job
with the spec its run was issued with, `boards` finds the boards a job fits, `summary`
builds the stored summary and fingerprint, and `fingerprints` finds a job that counted
already. Whether a run token may still upload is `app.runs.run_token`. The service
(`app/bench/`) gathers their inputs and stores their results.
"""

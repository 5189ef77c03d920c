"""The checks an uploaded job must pass, and what the service keeps of it, as pure functions.

`rules` is the rule table (every failure, not the first), `spec_match` compares a job
with the spec its run was issued with, `run_token` says whether a run token may still
upload, `boards` finds the boards a job fits, and `summary` builds the stored summary and
fingerprint. The service (`app/bench/`) gathers their inputs and stores their results.
"""

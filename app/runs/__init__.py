"""Issued runs: the policy of what the service issues, the spec it issues, their rows, and
whether a run's token may still upload (`run_token`)."""

"""Issued runs: the policy of what the service issues, the spec it issues, and their rows."""

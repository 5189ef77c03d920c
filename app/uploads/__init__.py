"""Checking an uploaded job: reading its archive safely, and redacting key-like values."""

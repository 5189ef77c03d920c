"""Redaction's rule set and scanner; `app.uploads.redact` applies them to files."""

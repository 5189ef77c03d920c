"""The service's private state: SQLAlchemy models, engines and sessions, and migrations."""

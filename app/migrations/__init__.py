"""Alembic migrations of the service's database; `app.db.migrate` runs them."""

"""Tests of the service's part of the site: serving it, rebuilding it, its CLI and workflow
(the builder itself is tested in tests/sitebuild/)."""

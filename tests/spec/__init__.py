"""Tests that hold a promise of the user guides in ../shared/spec/ not held elsewhere.

Each is named in docs/guide-promises.md beside the sentence it holds."""

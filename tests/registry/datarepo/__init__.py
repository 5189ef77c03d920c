"""Tests of the data repository."""

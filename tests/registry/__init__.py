"""Tests of the registry package."""

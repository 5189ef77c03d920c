"""Tests of the static Pages site."""

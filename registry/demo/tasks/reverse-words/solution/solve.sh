#!/bin/bash
# The reference solution the oracle agent runs.
set -eu
echo "the quick brown fox" | tr " " "\n" | tac | paste -sd" " > /app/reversed.txt

#!/bin/bash
# The reference solution the oracle agent runs.
set -eu
# This reference solution is wrong on purpose: the demo keeps one task the oracle fails.
echo 1471 > /app/factor.txt

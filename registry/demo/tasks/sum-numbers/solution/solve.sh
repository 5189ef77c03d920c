#!/bin/bash
# The reference solution the oracle agent runs.
set -eu
echo $(( 100 * 101 / 2 )) > /app/sum.txt

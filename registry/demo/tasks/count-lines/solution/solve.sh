#!/bin/bash
# The reference solution the oracle agent runs.
set -eu
printf "alpha\nbeta\ngamma\n" > /app/lines.txt
wc -l < /app/lines.txt > /app/count.txt

#!/bin/bash
# The reference solution the oracle agent runs.
set -eu
echo "hello, world" > /app/hello.txt

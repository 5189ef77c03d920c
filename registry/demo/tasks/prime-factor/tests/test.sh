#!/bin/bash
# Grades the task: writes 1 or 0 to /logs/verifier/reward.txt.
set -u
if [ "$(tr -d "[:space:]" < /app/factor.txt 2>/dev/null)" = "6857" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi

#!/bin/bash
# Grades the task: writes 1 or 0 to /logs/verifier/reward.txt.
set -u
ok=1
[ "$(cat /app/lines.txt 2>/dev/null)" = "$(printf "alpha\nbeta\ngamma")" ] || ok=0
[ "$(tr -d "[:space:]" < /app/count.txt 2>/dev/null)" = "3" ] || ok=0
echo $ok > /logs/verifier/reward.txt

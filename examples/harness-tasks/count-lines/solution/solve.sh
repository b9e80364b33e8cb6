#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
tail -n +2 data.csv | wc -l | tr -d ' ' > count.txt

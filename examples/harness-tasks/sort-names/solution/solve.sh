#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
LC_ALL=C sort -o names.txt names.txt

#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
sed -i 's/colour/color/g' story.txt

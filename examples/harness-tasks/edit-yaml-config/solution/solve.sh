#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
sed -i 's/^  replicas: 1$/  replicas: 3/' app.yaml

#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
printf '\n\ndef multiply(a, b):\n    return a * b\n' >> mathlib.py

#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
printf '\n\ndef mul(a, b):\n    return a * b\n' >> mathlib.py

#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
echo 24 > answer.txt

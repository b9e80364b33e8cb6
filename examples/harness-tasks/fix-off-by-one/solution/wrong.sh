#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
sed -i 's|(len(values) - 1)|(len(values) + 1)|' stats.py

#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
LC_ALL=C sort names.txt > sorted.txt

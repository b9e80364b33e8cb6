#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
sed -i 's/ehco/echo/' greet.sh

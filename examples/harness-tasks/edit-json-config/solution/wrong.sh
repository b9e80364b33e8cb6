#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
sed -i -e 's/8080/"9090"/' -e 's/true/false/' config.json

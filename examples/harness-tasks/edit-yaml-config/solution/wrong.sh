#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
sed -i 's/^  replicas: 1$/  replicas: "3"/' app.yaml

#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
sed -i 's/port = 5432/port = 6543/' settings.ini

#!/usr/bin/env bash
# Verifier (Harbor's tests/test.sh): runs in the workspace after the agent finished.
# Exit 0 = pass; writes 1 or 0 to $REWARD_FILE (default Harbor's /logs/verifier/reward.txt
# when that directory exists).
set -u
TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"

check() {
[ -f answer.txt ] && [ "$(tr -d '[:space:]' < answer.txt)" = "42" ]
}

if check >/dev/null 2>&1; then reward=1; else reward=0; fi
if [ -d "$(dirname "$REWARD_FILE")" ]; then echo "$reward" > "$REWARD_FILE"; fi
echo "reward $reward"
[ "$reward" = 1 ]

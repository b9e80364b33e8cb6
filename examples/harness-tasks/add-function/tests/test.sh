#!/usr/bin/env bash
# Verifier (Harbor's tests/test.sh): runs in the workspace after the agent finished.
# Exit 0 = pass; writes 1 or 0 to $REWARD_FILE (default Harbor's /logs/verifier/reward.txt
# when that directory exists).
set -u
TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"

check() {
python3 -c "import mathlib as m; assert m.multiply(3, 4) == 12 and m.multiply(-2, 5) == -10 and m.add(1, 2) == 3 and m.subtract(5, 3) == 2"
}

if check >/dev/null 2>&1; then reward=1; else reward=0; fi
if [ -d "$(dirname "$REWARD_FILE")" ]; then echo "$reward" > "$REWARD_FILE"; fi
echo "reward $reward"
[ "$reward" = 1 ]

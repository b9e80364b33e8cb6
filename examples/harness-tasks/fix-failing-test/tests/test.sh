#!/usr/bin/env bash
# Verifier (Harbor's tests/test.sh): runs in the workspace after the agent finished.
# Exit 0 = pass; writes 1 or 0 to $REWARD_FILE (default Harbor's /logs/verifier/reward.txt
# when that directory exists).
set -u
TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"

check() {
python3 -c "import calc; assert calc.add(2, 3) == 5 and calc.add(-1, 1) == 0 and calc.add(10, 5) == 15" &&
grep -q "assertEqual(calc.add(2, 3), 5)" test_calc.py &&
python3 -m unittest -q test_calc
}

if check >/dev/null 2>&1; then reward=1; else reward=0; fi
if [ -d "$(dirname "$REWARD_FILE")" ]; then echo "$reward" > "$REWARD_FILE"; fi
echo "reward $reward"
[ "$reward" = 1 ]

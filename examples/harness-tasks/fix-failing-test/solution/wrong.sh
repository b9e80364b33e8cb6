#!/usr/bin/env bash
# A plausible wrong attempt that the check rejects. Runs inside the workspace.
set -eu
sed -i 's/assertEqual(calc.add(2, 3), 5)/assertEqual(calc.add(2, 3), -1)/' test_calc.py

#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
python3 - <<'EOF'
import configparser
c = configparser.ConfigParser()
c.read('settings.ini')
c['database']['port'] = '6543'
with open('settings.ini', 'w') as f:
    c.write(f)
EOF

#!/usr/bin/env bash
# The oracle (Harbor's solution/solve.sh): solves the task. Runs inside the workspace.
set -eu
python3 - <<'EOF'
import json
c = json.load(open('config.json'))
c.update(port=9090, debug=False)
json.dump(c, open('config.json', 'w'), indent=2)
EOF

#!/usr/bin/env bash
# Installs the pinned agent-harness CLIs that issue 50's runner and tests drive, each under its own
# npm prefix in .tmp/harness-clis/<harness>/ (git-ignored, never in package.json: the three
# together are hundreds of MB and only the harness tests and bench need them).
#
#   scripts/install-harness-clis.sh                 # all three
#   scripts/install-harness-clis.sh claude-code     # one (or several) by harness name
#
# Idempotent: a harness whose marker file (.installed) names the pinned package@version is skipped.
# Prints the wall time and disk size of each install; exits non-zero when any install fails.
# Environment: EDGE_ROLLOUT_HARNESS_CLIS overrides the install root (default .tmp/harness-clis).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${EDGE_ROLLOUT_HARNESS_CLIS:-$ROOT/.tmp/harness-clis}"

# harness name -> pinned npm spec; keep in step with clients/python/edge_rollout/harness/clis.py.
declare -A SPECS=(
  [claude-code]="@anthropic-ai/claude-code@2.1.332"
  [codex]="@openai/codex@0.171.0"
  [opencode]="opencode-ai@1.18.33"
)
ORDER=(claude-code codex opencode)

if [[ $# -gt 0 ]]; then
  WANTED=("$@")
else
  WANTED=("${ORDER[@]}")
fi

failed=0
for harness in "${WANTED[@]}"; do
  spec="${SPECS[$harness]:-}"
  if [[ -z "$spec" ]]; then
    echo "unknown harness '$harness' (known: ${ORDER[*]})" >&2
    failed=1
    continue
  fi
  prefix="$DEST/$harness"
  marker="$prefix/.installed"
  if [[ -f "$marker" && "$(cat "$marker")" == "$spec" ]]; then
    echo "$harness: $spec already installed in $prefix"
    continue
  fi
  # A half-finished or older install is removed whole so the prefix holds exactly one version.
  rm -rf "$prefix"
  mkdir -p "$prefix"
  start=$(date +%s.%N)
  # --global with --prefix puts the package in <prefix>/lib/node_modules and its binary in
  # <prefix>/bin, the layout clis.py expects; lifecycle scripts stay on (the CLIs fetch nothing
  # in them, but their platform binaries come as optional dependencies and must be kept).
  if npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error "$spec"; then
    end=$(date +%s.%N)
    echo "$spec" >"$marker"
    size=$(du -sm "$prefix" | cut -f1)
    printf '%s: installed %s in %.1f s, %s MB on disk (%s)\n' \
      "$harness" "$spec" "$(awk "BEGIN{print $end - $start}")" "$size" "$prefix"
  else
    echo "$harness: npm install of $spec failed" >&2
    rm -rf "$prefix"
    failed=1
  fi
done
exit "$failed"

#!/usr/bin/env bash
# Alternates `loadtest/bin/loadtest bench` between the router as of BASE (built in a git worktree) and the router
# of this checkout, RUNS times each, base first. Each run's report goes to OUT/base-N.md or OUT/table-N.md.
#
#   loadtest/results/near-cache-table-2026-12-06/ab.sh BASE RUNS OUT [bench options...]
#   e.g. ab.sh 1b362ee 2 /tmp/ab --loads known --routers 1 --warmup-seconds 20
set -euo pipefail
base=${1:?usage: ab.sh BASE RUNS OUT [bench options...]}
runs=${2:?usage: ab.sh BASE RUNS OUT [bench options...]}
out=$(mkdir -p "$3" && cd "$3" && pwd)
shift 3
tree=$(mktemp -d)/base
git worktree add -q --detach "$tree" "$base"
trap 'git worktree remove --force "$tree"' EXIT
for i in $(seq 1 "$runs"); do
  echo "[$(date -u +%H:%M:%S)] base, run $i" >&2
  (cd "$tree" && loadtest/bin/loadtest bench "$@" --out "$out/base-$i.md" >"$out/base-$i.log" 2>&1)
  echo "[$(date -u +%H:%M:%S)] this checkout, run $i" >&2
  loadtest/bin/loadtest bench "$@" --out "$out/table-$i.md" >"$out/table-$i.log" 2>&1
done

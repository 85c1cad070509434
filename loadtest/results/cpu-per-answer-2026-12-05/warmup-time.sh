#!/usr/bin/env bash
# How long each router jar's warm-up takes alone on one core: JAR... each started in turn, three times, pinned to
# core 0, and its "warmed the decision path" log line printed. Run from the repository root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
sed "s/port: 39002/port: 39020/" "$here/router.yaml" > "$work/router.yaml"
for _ in 1 2 3; do
  for jar in "$@"; do
    taskset -c 0 java -Xmx1g -jar "$jar" --config "$work/router.yaml" > "$work/router.log" 2>&1 & pid=$!
    for _ in $(seq 1 60); do grep -q 'listening on' "$work/router.log" && break; sleep 0.5; done
    echo "$jar: $(grep -o 'warmed.*' "$work/router.log" || echo 'no warm-up line')"
    kill $pid; wait $pid 2>/dev/null || true
  done
done

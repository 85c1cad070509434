#!/usr/bin/env bash
# Known-session load alternated between the no-op server and router jars, the servers on core 0 and the client on
# core 1; for each server, the CPU per answer of its whole process (utime + stime, /proc/PID/stat), its throughput
# and its latency, per measured part and as medians. Run from the repository root after a build (the no-op and the
# client come from loadtest/target):
#
#   loadtest/results/cpu-per-answer-2026-12-05/ab.sh NAME=JAR[:JVM_FLAG] ...
#
# for example  old=/tmp/old.jar new=/tmp/new.jar new-ld=/tmp/new.jar:-Dio.netty.leakDetection.level=disabled
# Every router runs the embedded store on router.yaml (two replicas that are never dialled) and all requests carry one
# session id, so after the first one every answer is a known session from the near-cache.
# Environment: ROUNDS (8), N requests per measured part (200000; each part follows a lead-in of N/4), WARM requests
# per server before the first round (300000), STAGGER=1 starts each router once the previous one listens (0: all at
# once, as a node restarting every pod does), NOWARMUP=1 starts the routers with warmUp: false.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
CP="loadtest/target/classes:loadtest/target/lib/*"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
taskset -c 0 java -Xmx1g -cp "$CP" io.scrouter.loadtest.bench.NoopProcessor 39001 > "$work/noop.log" 2>&1 &
pids+=($!); specs="noop=39001:$!"
port=39010
for arg in "$@"; do
  name=${arg%%=*}; rest=${arg#*=}; jar=${rest%%:*}; flag=""
  [ "$jar" != "$rest" ] && flag=${rest#*:}
  extra=""; [ "${NOWARMUP:-0}" = 1 ] && extra=", warmUp: false"
  sed "s/port: 39002/port: $port/; s/port: 39003/port: $((port + 1))/; s/drainPeriod: 0s/drainPeriod: 0s$extra/" \
    "$here/router.yaml" > "$work/$name.yaml"
  taskset -c 0 java -Xmx1g $flag -jar "$jar" --config "$work/$name.yaml" > "$work/$name.log" 2>&1 &
  pids+=($!); specs="$specs,$name=$port:$!"; port=$((port + 2))
  if [ "${STAGGER:-1}" = 1 ]; then
    for _ in $(seq 1 60); do grep -q 'listening on' "$work/$name.log" && break; sleep 0.5; done
  fi
done
for _ in $(seq 1 60); do [ "$(grep -l 'listening on' "$work"/*.log 2>/dev/null | wc -l)" -ge $# ] && break; sleep 0.5; done
sleep 2
for arg in "$@"; do name=${arg%%=*}; echo "$name: $(grep -o 'warmed.*' "$work/$name.log" || echo 'no warm-up line')"; done
taskset -c 1 java -cp "$CP" "$here/AbProbe.java" "$specs" "${WARM:-300000}" "${N:-200000}" "${ROUNDS:-8}" \
  "$(cat /proc/sys/kernel/random/uuid)"

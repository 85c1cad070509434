#!/usr/bin/env bash
# known sessions, 1 router: compiler threads at nice 19 against the default, alternating
cd /work/main
for pair in 1 2; do
  loadtest/bin/loadtest bench --loads known --routers 1 --warmup-seconds 20 --server-jvm "-Xmx1g -XX:ThreadPriorityPolicy=1 -XX:CompilerThreadPriority=19 -XX:VMThreadPriority=0 -XX:JavaPriority8_To_OSPriority=0 -XX:JavaPriority9_To_OSPriority=0 -XX:JavaPriority10_To_OSPriority=0" --out loadtest/results/compiler-priority-2026-12-05/nice19-$pair.md > loadtest/results/compiler-priority-2026-12-05/nice19-$pair.log 2>&1
  loadtest/bin/loadtest bench --loads known --routers 1 --warmup-seconds 20 --out loadtest/results/compiler-priority-2026-12-05/plain-$pair.md > loadtest/results/compiler-priority-2026-12-05/plain-$pair.log 2>&1
done

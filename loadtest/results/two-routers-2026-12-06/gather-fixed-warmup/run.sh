#!/bin/bash
cd /work/main
for i in 1 2; do
  for g in 1 5; do
    date -u +"%H:%M:%S start g=$g run $i"
    loadtest/bin/loadtest bench --loads new --routers 2 --warmup-seconds 20 --server-jvm "-Xmx1g -Dscrouter.gatherMillis=$g" --out /tmp/gather-ab/g$g-$i.md > /tmp/gather-ab/g$g-$i.log 2>&1
  done
done
date -u +"%H:%M:%S done"

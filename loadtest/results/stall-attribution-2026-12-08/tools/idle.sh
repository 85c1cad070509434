#!/bin/bash
# A diagnostic run by hand (2026-12-08 02:20 UTC): the no-op and embedded servers named in the bench's
# progress log under SCHED_IDLE for the whole run. Usage: idle.sh ROUNDS.log SECONDS
# set SCHED_IDLE on the no-op and embedded servers named in the rounds log, every 2 s
log=$1; end=$((SECONDS+$2))
while (( SECONDS < end )); do
  for p in $(grep -E "(noop|router_embedded)-[0-9] SERVING" "$log" 2>/dev/null | sed 's/.*(pid \([0-9]*\)).*/\1/'); do
    chrt -i -a -p 0 "$p" >/dev/null 2>&1
  done
  sleep 2
done

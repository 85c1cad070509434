#!/bin/bash
# Redis's own time per follow-up batch: FOLLOW_UP as it was before the batches carried stream ids (a1d40dd) against
# FOLLOW_UP at a given commit (HEAD unless set), on a redis-server of its own on 127.0.0.1:6399 whose stream holds
# 200,000 entries and whose channel has two subscribers, as with two routers. Each batch: three announcements and
# three index writes, about a batch's size at 4 new sessions in flight (0.3 batches per new session). Prints
# INFO commandstats' usec_per_call of EVALSHA (the script's commands included) for 20,000 calls of each, in three
# interleaved rounds.
#   loadtest/results/feed-batches-2026-12-07/script-cost.sh [commit]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
new=${1:-HEAD}
work=$(mktemp -d)
trap 'redis-cli -p 6399 shutdown nosave >/dev/null 2>&1 || true; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
src=extproc/src/main/java/io/scrouter/extproc/redis/SessionScripts.java
git show a1d40dd:$src > "$work/old.java"
git show "$new":$src > "$work/new.java"
# The Lua text of FOLLOW_UP, with ANNOUNCE_BATCH inlined where the source composes it.
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
def block(src, name):
    i = src.index(name + ' = ')
    j = src.index('"""', i) + 3
    lines = src[j:src.index('"""', j)].split('\n')[1:]
    indent = min(len(l) - len(l.lstrip()) for l in lines if l.strip())
    return '\n'.join(l[indent:] for l in lines).replace('\\\\', '\\')
for v in ('old', 'new'):
    src = open(f'{work}/{v}.java').read()
    head = src[src.index('FOLLOW_UP = '):].split('"""')[0]
    lua = (block(src, 'ANNOUNCE_BATCH') if 'ANNOUNCE_BATCH' in head else '') + block(src, 'FOLLOW_UP')
    open(f'{work}/{v}.lua', 'w').write(lua)
PY
pin0=(); pin1=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin0=(taskset -c 0); pin1=(taskset -c 1); fi
"${pin0[@]}" redis-server --port 6399 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --dir "$work" >/dev/null
for _ in $(seq 50); do redis-cli -p 6399 ping >/dev/null 2>&1 && break; sleep 0.1; done
python3 -c "
for i in range(200000):
    print(f'XADD feed * b \"s{i} r{i % 4}@d\"')" | redis-cli -p 6399 --pipe >/dev/null
redis-cli -p 6399 subscribe ch >/dev/null 2>&1 & redis-cli -p 6399 subscribe ch >/dev/null 2>&1 &
sleep 0.5
old=$(redis-cli -p 6399 script load "$(cat "$work/old.lua")")
new=$(redis-cli -p 6399 script load "$(cat "$work/new.lua")")
for round in 1 2 3 4 5; do
  for v in old new; do
    sha=${!v}
    redis-cli -p 6399 config resetstat >/dev/null
    "${pin1[@]}" python3 - "$sha" <<'PY'
import socket, sys, time, uuid
sha = sys.argv[1]
def command(*words):
    out = b'*%d\r\n' % len(words)
    for w in words:
        w = w.encode()
        out += b'$%d\r\n%s\r\n' % (len(w), w)
    return out
s = socket.create_connection(('127.0.0.1', 6399))
for block in range(200):
    batch = b''
    for _ in range(100):
        messages = ''.join(f'{uuid.uuid4()} r1.replica@app-20261207-0001\n' for _ in range(3))
        pairs = ''.join(f'{int(time.time() * 1000)} {uuid.uuid4()} ' for _ in range(3))
        batch += command('EVALSHA', sha, '2', 'feed', 'idx:a', 'ch', '200000', 'b', messages, pairs)
    s.sendall(batch)
    replies = b''
    while replies.count(b'\r\n') < 100:
        replies += s.recv(65536)
PY
    echo "round $round, $v: $(redis-cli -p 6399 info commandstats | grep cmdstat_evalsha | tr -d '\r' | sed 's/.*usec_per_call=\([0-9.]*\).*/\1 µs per batch/')"
  done
done

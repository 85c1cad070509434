# Groups a round's requests over 2 ms into stalls (sent within 3 ms of each other) and counts them.
# Usage: python3 an.py ROUND.tsv   (ROUND.tsv: one line per measured request, written by request-log.patch:
# send time on the monotonic clock in ns, latency in ns, server index)
import sys
rows=[l.split('\t') for l in open(sys.argv[1])]
rows=[(int(a),int(b),int(c)) for a,b,c in rows]
rows.sort()
t0=rows[0][0]
n=len(rows); slow=[r for r in rows if r[1]>2e6]
print('n',n,'slow>2ms',len(slow), 'per server', [sum(1 for r in slow if r[2]==s) for s in (0,1)])
# cluster: group slow requests whose sent times are within 3 ms of each other
groups=[];cur=[]
for r in slow:
    if cur and r[0]-cur[-1][0] > 3e6:
        groups.append(cur);cur=[]
    cur.append(r)
if cur: groups.append(cur)
sizes=sorted(len(g) for g in groups)
print('groups',len(groups),'sizes hist', {k:sizes.count(k) for k in sorted(set(sizes))})
# biggest groups
for g in sorted(groups,key=len,reverse=True)[:12]:
    print('t=%.1f ms  n=%d  max=%.2f ms  servers=%s' % ((g[0][0]-t0)/1e6, len(g), max(r[1] for r in g)/1e6, ''.join(str(r[2]) for r in g)))

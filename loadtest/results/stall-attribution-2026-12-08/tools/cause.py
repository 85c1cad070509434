# Classifies a round's stalls by what held core 0 beyond the routers' event loops and redis-server.
# Usage: python3 cause.py stalls-core0.txt ROUND.tsv   (stalls-core0.txt: who.py's output with x)
import sys,re
from collections import Counter
def cat(name):
    srv,th=name.split(':',1)
    if srv in('rA','rB'):
        if th.startswith('C# Compiler'): return 'routers\' own compilers'
        if th.startswith('VM Thread') or th.startswith('Notification'): return 'routers\' GC'
        if th.startswith('Sweeper'): return 'routers\' code cache sweeper'
        return 'routers\' background threads (probes, maintenance, HttpClient)'
    if srv in('emb0','emb1','noop0','noop1'):
        return 'idle servers (%s)'%('compilers' if th.startswith('C# Compiler') else 'other threads')
    if srv=='redis': return 'redis'
    return 'other processes'
tot=Counter(); grp=Counter(); N=0
for f,tsv in zip(sys.argv[1::2],sys.argv[2::2]):
    N+=sum(1 for _ in open(tsv))
    for l in open(f):
        m=re.match(r'\s*([\d.]+) ms len ([\d.]+) ms n=(\d+) \| (.*)',l)
        if not m: continue
        ln=float(m.group(2)); n=int(m.group(3))
        items=[(k,float(v)) for k,v in re.findall(r'(\S+:[^,]*?) ([\d.]+)(?:,|$)',m.group(4))]
        idle=sum(v for k,v in items if k.startswith('pididle'))
        if idle>0.3*ln: c='core 0 idle: the client\'s core'
        else:
            extra=[(v,k) for k,v in items if not (k.startswith('pididle') or k.startswith('redis:') or re.match(r'r[AB]:scrouter-io',k))]
            extra.sort(reverse=True)
            c=cat(extra[0][1]) if extra and extra[0][0]>=0.5 else 'queueing: the routers and Redis alone'
        tot[c]+=n; grp[c]+=1
print('requests',N)
for c,v in tot.most_common(): print('%-60s groups %3d  requests over 2 ms %4d  (%.2f%% of all)'%(c,grp[c],v,100*v/N))

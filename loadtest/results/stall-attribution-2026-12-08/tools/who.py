# For each stall of a round, what ran on one core meanwhile, from `perf sched timehist` output.
# Usage: TH=th.txt CPU=0 python3 who.py ROUND.tsv PID=label,... [x] [N]
#   th.txt: perf sched timehist -i perf.data (recorded with -k CLOCK_MONOTONIC -C 0,1, the clock of the .tsv)
#   x: print every stall; N: how many threads to list in the summary of the core's share
import sys,re,bisect
from collections import defaultdict
tsv=sys.argv[1]; labels=dict(x.split('=') for x in sys.argv[2].split(','))
rows=sorted(tuple(map(int,l.split('\t'))) for l in open(tsv))
t0=rows[0][0]; t1=rows[-1][0]+rows[-1][1]
iv=[]
for l in open(__import__('os').environ.get('TH','/tmp/rl/th.txt')):
    p=l.split()
    if len(p)<6 or not p[1].startswith('[000'+__import__('os').environ.get('CPU','0')+']'): continue
    try: end=float(p[0])*1e9
    except: continue
    if end<t0-1e8 or end>t1+1e8: continue
    m=re.match(r'(.*)\[(\d+)(?:/(\d+))?\]$', ' '.join(p[2:-3]))
    if not m:
        name,tid,pid=' '.join(p[2:-3]),'0','idle'
    else: name,tid,pid=m.group(1),m.group(2),m.group(3) or m.group(2)
    run=float(p[-1])*1e6
    iv.append((end-run,end,labels.get(pid,'pid'+pid)+':'+re.sub(r'\d+','#',name)))
iv.sort()
starts=[i[0] for i in iv]
def occupy(a,b):
    d=defaultdict(float)
    j=bisect.bisect_left(starts,a-5e7)
    while j<len(iv) and iv[j][0]<b:
        s,e,n=iv[j]
        o=min(e,b)-max(s,a)
        if o>0: d[n]+=o
        j+=1
    return d
slow=[r for r in rows if r[1]>2e6]
groups=[];cur=[]
for r in slow:
    if cur and r[0]-cur[-1][0] > 3e6: groups.append(cur);cur=[]
    cur.append(r)
if cur: groups.append(cur)
tot=defaultdict(float); totlen=0
for g in groups:
    gs=g[0][0]; ge=max(r[0]+r[1] for r in g)
    d=occupy(gs,ge); totlen+=ge-gs
    for k,v in d.items(): tot[k]+=v
    top=sorted(d.items(),key=lambda x:-x[1])[:5]
    if len(sys.argv)>3: print('%7.1f ms len %.1f ms n=%d | '%((gs-t0)/1e6,(ge-gs)/1e6,len(g))+', '.join('%s %.2f'%(k,v/1e6) for k,v in top))
allr=occupy(t0,t1)
L=t1-t0
print('share of core: in stall windows (%.0f ms) vs whole round (%.0f ms)'%(totlen/1e6,L/1e6))
keys=sorted(set(tot)|set(allr), key=lambda k:-(tot.get(k,0)/totlen))
for k in keys[:int(sys.argv[4]) if len(sys.argv)>4 else 25]:
    print('%-45s %6.1f%%  %6.1f%%'%(k,100*tot.get(k,0)/totlen,100*allr.get(k,0)/L))

# Milliseconds of compiler-thread time per second of each server, from 3 s before a round's measured part.
# Usage: python3 jitsum.py ROUND.tsv PID=label,...   (reads th.txt in the current directory)
import sys,re
from collections import defaultdict
labels=dict(x.split('=') for x in sys.argv[2].split(','))
rows=sorted(tuple(map(int,l.split('\t'))) for l in open(sys.argv[1]))
t0=rows[0][0]/1e9; t1=(rows[-1][0]+rows[-1][1])/1e9
# also 10 s before the round
b=defaultdict(lambda:[0.0]*8)
for l in open('th.txt'):
    p=l.split()
    if len(p)<6 or 'Compiler' not in l: continue
    try: end=float(p[0])
    except: continue
    m=re.search(r'\[(\d+)/(\d+)\]',l)
    if not m: continue
    lab=labels.get(m.group(2))
    if not lab: continue
    sl=int((end-t0)//1+3)  # seconds from t0-3
    if 0<=sl<8: b[lab][sl]+=float(p[-1])
print('compiler ms per second, from 3 s before the measured part (lead-in) to its end')
for k,v in sorted(b.items()): print(k, ' '.join('%5.1f'%x for x in v))

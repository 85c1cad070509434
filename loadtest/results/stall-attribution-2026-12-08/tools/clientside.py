# For the stalls during which core 0 was mostly idle: what held the client's core (core 1).
# Usage: python3 clientside.py stalls-core0.txt stalls-core1.txt
import sys,re
from collections import Counter
c0,c1=sys.argv[1],sys.argv[2]
def parse(f):
    d={}
    for l in open(f):
        m=re.match(r'\s*([\d.]+) ms len ([\d.]+) ms n=(\d+) \| (.*)',l)
        if m: d[m.group(1)]=(float(m.group(2)),int(m.group(3)),[(k,float(v)) for k,v in re.findall(r'(\S+:[^,]*?) ([\d.]+)(?:,|$)',m.group(4))])
    return d
a,b=parse(c0),parse(c1)
cnt=Counter()
for t,(ln,n,items) in a.items():
    idle=sum(v for k,v in items if k.startswith('pididle'))
    if idle<=0.3*ln: continue
    its=[(v,k) for k,v in b.get(t,(0,0,[]))[2] if not (k.startswith('pididle') or 'grpc-nio-worker' in k)]
    its.sort(reverse=True)
    if its and its[0][0]>=0.5:
        k=its[0][1]; 
        c=('client GC' if ('GC Thread' in k or 'VM Thread' in k) else 'client compilers' if 'Compiler' in k else "client's replica stand-in (HTTP server)" if 'HTTP-Dispatcher' in k else 'kernel thread ('+k.split(':')[1].rstrip('#.')+')' if k.startswith('pid') else k)
    else: c='client event loop alone'
    cnt[c]+=n
print(dict(cnt))

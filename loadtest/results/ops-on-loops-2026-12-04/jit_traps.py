import re, sys, glob, os
# usage: python3 jit_traps.py DIR BENCH-PROGRESS-LOG
# DIR holds -XX:LogFile=DIR/hs-%p.log files; the bench's progress output names each server's pid.
# Prints per server: compiled methods installed, versions made not entrant, runtime traps (whole life),
# and each trap at, or compiled into, sun.nio.ch code.
log = open(sys.argv[2]).read()
names = {m.group(2): m.group(1) for m in re.finditer(r'(\S+) SERVING on \S+ \(pid (\d+)\)', log)}
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'hs-pid*.log'))):
    pid = re.search(r'pid(\d+)', f).group(1)
    name = names.get(pid, pid)
    nm = ne = 0; traps = []; sel = []
    cur = None
    tasks = {}
    with open(f, errors='replace') as fh:
        for line in fh:
            if line.startswith('<task '):
                c = re.search(r"compile_id='(\d+)'", line); m = re.search(r"method='([^']+)'", line)
                if c and m:
                    tasks.setdefault(c.group(1), m.group(1))
    with open(f, errors='replace') as fh:
        for line in fh:
            if line.startswith('<task '):
                c = re.search(r"compile_id='(\d+)'", line); m = re.search(r"method='([^']+)'", line)
                if c and m:
                    tasks[c.group(1)] = m.group(1)
            if line.startswith('<nmethod '):
                nm += 1
            elif line.startswith('<make_not_entrant '):
                ne += 1
            elif line.startswith('<uncommon_trap ') and 'reason=' in line and 'thread=' in line and not line.rstrip().endswith('/>'):
                r = re.search(r"reason='([^']+)'", line).group(1)
                st = re.search(r"stamp='([^']+)'", line)
                c = re.search(r"compile_id='(\d+)'", line)
                cur = [r, st.group(1) if st else '?', None, tasks.get(c.group(1), '?') if c else '?']
            elif cur is not None and line.startswith('<jvms '):
                if cur[2] is None:
                    cur[2] = re.search(r"method='([^']+)'", line).group(1)
            elif cur is not None and line.startswith('</uncommon_trap>'):
                traps.append(cur)
                if (cur[2] and cur[2].startswith('sun.nio.ch.')) or cur[3].startswith('sun.nio.ch.'):
                    sel.append(cur)
                cur = None
    print(f"{name}: {nm} compiled methods installed, {ne} made not entrant, {len(traps)} runtime traps; in sun.nio.ch: {len(sel)}")
    for r, st, m, c in sel:
        print(f"   {st:>9} s  {r:<22} at {' '.join(m.split()[:2])}, compiled {' '.join(c.split()[:2])}")

#!/usr/bin/env python3
# bench/host/pretouch.py: run A of BENCHMARKS.md "The first turn after 15 quiet minutes".
# Usage: python3 pretouch.py <pid of a kernel-bench --sections firstturn run> 896
"""Waits until the kernel-agentd and kernel-tg started by the bench whose pid is argv[1] are
argv[2] seconds old, then reads every page the guest has resident of both (all readable mappings through
/proc/<pid>/mem), so that the host has them in again before the bench's quiet turn."""
import os, sys, time, subprocess
bench, at = int(sys.argv[1]), float(sys.argv[2])
def children():
    out = subprocess.run(["pgrep", "-P", str(bench)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]
def age(pid):
    ticks = os.sysconf("SC_CLK_TCK")
    start = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19]) / ticks
    up = float(open("/proc/uptime").read().split()[0])
    return up - start
while len(children()) < 2:
    time.sleep(0.5)
pids = children()
while age(pids[0]) < at:
    time.sleep(0.2)
t0 = time.monotonic(); pages = 0
for pid in pids:
    with open(f"/proc/{pid}/mem", "rb", 0) as mem, open(f"/proc/{pid}/pagemap", "rb", 0) as pm:
        for line in open(f"/proc/{pid}/maps"):
            addr, perms = line.split()[:2]
            if "r" not in perms or "[vvar" in line or "[vsyscall" in line:
                continue
            lo, hi = (int(x, 16) for x in addr.split("-"))
            pm.seek(lo // 4096 * 8)
            entries = pm.read((hi - lo) // 4096 * 8)
            for i, page in enumerate(range(lo, hi, 4096)):
                # Only pages the guest has resident (bit 63 of the pagemap entry).
                if not entries[i * 8 + 7] & 0x80:
                    continue
                try:
                    mem.seek(page); mem.read(1); pages += 1
                except OSError:
                    pass
print(f"touched {pages} pages of {pids} at age {at}s in {(time.monotonic()-t0)*1000:.1f} ms", flush=True)

#!/usr/bin/env python3
"""Measures `plugtop fleet` against a filled Prometheus (scripts/fleet-scale.sh):
--batch's wall time and peak RSS, and in a pseudo-terminal the time to the
first screen, each refresh's time (the header says how long the queries
took) and the screen's peak RSS after several refreshes.

usage: fleet-scale.py PLUGTOP URL GUESTS
"""
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtscreen import Screen  # noqa: E402

plugtop, url, guests = sys.argv[1], sys.argv[2], int(sys.argv[3])
common = ["--prometheus", url, "--stale-after", "900", "--timeout", "30"]

for run in range(3):
    start = time.monotonic()
    p = subprocess.Popen([plugtop, "fleet", *common, "--batch", "--format", "json"],
                         stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    doc = json.loads(out)
    n = len(doc["guests"])
    if n != guests:
        sys.exit(f"fleet-scale: FAIL: {n} guests listed, not {guests}")
    print(f"batch run {run + 1}: {wall:.3f} s wall, queries {doc['health']['took_ms']} ms, "
          f"peak RSS {usage.ru_maxrss / 1024:.1f} MiB, {n} guests, "
          f"exit {os.waitstatus_to_exitcode(status)}, "
          f"failed queries {len(doc['health']['failed'])}")

master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
start = time.monotonic()
proc = subprocess.Popen([plugtop, "fleet", *common, "--refresh", "1"],
                        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                        env=dict(os.environ, TERM="xterm-256color"))
os.close(slave)
screen = Screen(50, 160)
first = None
took = {}
deadline = time.monotonic() + 60
while time.monotonic() < deadline and len(took) < 8:
    r, _, _ = select.select([master], [], [], 0.05)
    if not r:
        continue
    screen.feed(os.read(master, 1 << 16))
    m = re.search(r"answered \d+ queries in (\d+) ms \(refresh (\d+)\)", screen.text())
    if m:
        if first is None:
            first = time.monotonic() - start
        took[int(m.group(2))] = int(m.group(1))
took = [took[k] for k in sorted(took)]
status = open(f"/proc/{proc.pid}/status").read()
hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024
os.write(master, b"q")
proc.wait(timeout=10)
if first is None:
    sys.exit("fleet-scale: FAIL: the screen never showed an answer")
print(f"screen: first screen after {first:.3f} s; refreshes (queries) {took} ms; "
      f"peak RSS {hwm:.1f} MiB after {len(took)} refreshes")
ok = first < 2.0 and max(took[1:] or took) < 1000 and hwm < 50
print("fleet-scale: " + ("PASS" if ok else "FAIL") +
      " (first screen < 2 s, each refresh < 1 s, RSS < 50 MiB)")
sys.exit(0 if ok else 1)

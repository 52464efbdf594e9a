#!/usr/bin/env python3
"""Speed and memory of `plugtop lsp` on a large rule file (LINES dense
variables; 9,500 make about 1 MB): the time to the first diagnostics, the
time a hover waits behind 100 queued full-text changes (checked once), the
peak RSS, and the wake-ups of an idle server with and without readings.
usage: scripts/lsp-speed.py [LINES]   (after cargo build --release)"""
import json, subprocess, sys, time
# Lines of variables: 2350 make about 248 KB, 9500 about 1 MB.
LINES = int(sys.argv[1]) if len(sys.argv) > 1 else 9500
p = subprocess.Popen(["target/release/plugtop", "lsp", "--root", "/"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    b = json.dumps(m).encode(); p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def recv():
    h = b""
    while not h.endswith(b"\r\n\r\n"): h += p.stdout.read(1)
    n = int(h.split(b":")[1].split(b"\r")[0]); return json.loads(p.stdout.read(n))
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}); recv()
line = 'v%d="(cpustat.idle[0] - cpustat.idle[1]) / (cpustat.total_ticks[0] - cpustat.total_ticks[1]) + loadavg"\n'
text = 'UPDATE="1"\nCPU_MIN="1"\nCPU_MAX="0"\n' + "".join(line % i for i in range(LINES)) + 'HOTPLUG="v1 > 0.5"\nHOTUNPLUG="v2 < 0.1"\n'
print("doc bytes", len(text))
t = time.time()
send({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf","languageId":"cpuplugd","version":0,"text":text}}})
m = recv(); print("first publish after %.0f ms, %d diagnostics" % ((time.time()-t)*1000, len(m["params"]["diagnostics"])))
print("after the first check", [l.strip() for l in open("/proc/%d/status" % p.pid) if l.startswith("VmHWM")])
for v in range(1, 101):
    send({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf","version":v},"contentChanges":[{"text":text}]}})
t = time.time(); send({"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf"},"position":{"line":3,"character":1}}})
while True:
    m = recv()
    if m.get("id") == 2: break
print("hover answered %.0f ms after 100 changes" % ((time.time()-t)*1000))
print([l for l in open("/proc/%d/status" % p.pid) if l.startswith(("VmHWM","VmRSS"))])
send({"jsonrpc":"2.0","id":3,"method":"shutdown"}); send({"jsonrpc":"2.0","method":"exit"}); p.wait(); print("exit", p.returncode)

# Wake-ups while idle, counted as every thread's voluntary context switches
# over 5 s after a file is open: none on a root without readings; one a
# second (UPDATE="1") on this machine's root with a file that loads.
import glob, os, tempfile
def switches(pid):
    n = 0
    for f in glob.glob("/proc/%d/task/*/status" % pid):
        for l in open(f):
            if l.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                n += int(l.split()[1])
    return n
small = 'UPDATE="1"\nCPU_MIN="1"\nCPU_MAX="0"\nHOTPLUG="loadavg > 4"\nHOTUNPLUG="loadavg < 0.5"\n'
bare = tempfile.mkdtemp()
os.makedirs(bare + "/proc"); open(bare + "/proc/stat", "w").write("cpu  1 2 3\n")  # a root, but no readings
for label, root in (("a root without readings", bare), ("this machine's root", "/")):
    p = subprocess.Popen(["target/release/plugtop", "lsp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}); recv()
    send({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf","languageId":"cpuplugd","version":0,"text":small}}})
    recv(); time.sleep(0.5)
    before = switches(p.pid); time.sleep(5); after = switches(p.pid)
    print("idle wake-ups in 5 s on %s: %d" % (label, after - before))
    send({"jsonrpc":"2.0","id":3,"method":"shutdown"}); send({"jsonrpc":"2.0","method":"exit"}); p.wait()

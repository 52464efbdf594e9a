#!/usr/bin/env python3
"""Speed and memory of `plugtop lsp` at its largest document (about 248 KB,
just under the 256 KiB it checks): the time to the first diagnostics, the
time a hover waits behind 100 queued full-text changes (checked once), and
the peak RSS. usage: scripts/lsp-speed.py (after cargo build --release)"""
import json, subprocess, time
p = subprocess.Popen(["target/release/plugtop", "lsp", "--root", "/"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    b = json.dumps(m).encode(); p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b); p.stdin.flush()
def recv():
    h = b""
    while not h.endswith(b"\r\n\r\n"): h += p.stdout.read(1)
    n = int(h.split(b":")[1].split(b"\r")[0]); return json.loads(p.stdout.read(n))
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}); recv()
line = 'v%d="(cpustat.idle[0] - cpustat.idle[1]) / (cpustat.total_ticks[0] - cpustat.total_ticks[1]) + loadavg"\n'
text = 'UPDATE="1"\nCPU_MIN="1"\nCPU_MAX="0"\n' + "".join(line % i for i in range(2350)) + 'HOTPLUG="v1 > 0.5"\nHOTUNPLUG="v2 < 0.1"\n'
print("doc bytes", len(text))
t = time.time()
send({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf","languageId":"cpuplugd","version":0,"text":text}}})
m = recv(); print("first publish after %.0f ms, %d diagnostics" % ((time.time()-t)*1000, len(m["params"]["diagnostics"])))
for v in range(1, 101):
    send({"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf","version":v},"contentChanges":[{"text":text}]}})
t = time.time(); send({"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x/cpuplugd.conf"},"position":{"line":3,"character":1}}})
while True:
    m = recv()
    if m.get("id") == 2: break
print("hover answered %.0f ms after 100 changes" % ((time.time()-t)*1000))
print([l for l in open("/proc/%d/status" % p.pid) if l.startswith(("VmHWM","VmRSS"))])
send({"jsonrpc":"2.0","id":3,"method":"shutdown"}); send({"jsonrpc":"2.0","method":"exit"}); p.wait(); print("exit", p.returncode)

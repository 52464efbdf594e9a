#!/usr/bin/env python3
"""Drives `plugtop fleet` in a pseudo-terminal against a real Prometheus
(scripts/fleet-e2e.sh): the table comes, `/` filters, `d` shows the drift,
Enter opens a guest, Prometheus is stopped (the header says so within one
refresh) and started again (the header recovers), `q` ends it with status 0.

usage: fleet-pty.py PLUGTOP URL STOP_CMD START_CMD EXPECT...
  EXPECT: texts the first screen must show (instances, the drift line)
"""
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time

plugtop, url, stop_cmd, start_cmd, *expect = sys.argv[1:]
REFRESH = 2.0
TIMEOUT = 1.0

master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
proc = subprocess.Popen(
    [plugtop, "fleet", "--prometheus", url, "--refresh", str(REFRESH),
     "--timeout", str(TIMEOUT), "--stale-after", "10"],
    stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    env=dict(os.environ, TERM="xterm-256color"), start_new_session=True)
os.close(slave)
seen = b""


def read_until(text, seconds, what):
    """Reads the terminal until `text` was printed since the last call."""
    global seen
    deadline = time.monotonic() + seconds
    start = time.monotonic()
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            seen += chunk
            if text.encode() in seen:
                took = time.monotonic() - start
                seen = seen[seen.index(text.encode()) + len(text):]
                return took
    sys.exit(f"fleet-pty: FAIL: {what}: never saw {text!r} within {seconds}s; last output: {seen[-2000:]!r}")


def press(keys):
    os.write(master, keys.encode())


took = read_until("Prometheus answered", 30, "the first screen")
print(f"fleet-pty: first screen after {took:.2f}s")
for t in expect:
    # Each text may already have gone by with the first screen: redraw.
    press("r")
    read_until(t, 10, "the first screens")
print("ok: the table shows every expected guest and the drift")
press("/mod")  # a filter: the mode column says auto for all of them
press("\r")
read_until('filter "mod"', 10, "the filter")
press("\x1b")
press("d")
read_until("the most common", 10, "the drift view")
print("ok: the drift view")
press("\x1b")
press("\r")
read_until("changes of decision", 15, "a guest in detail")
print("ok: a guest in detail")
press("\x1b")

subprocess.run(stop_cmd, shell=True, check=True)
stopped = time.monotonic()
read_until("Prometheus DOWN", REFRESH + TIMEOUT * 20 + 5, "Prometheus stopped")
print(f"ok: Prometheus stopped: the header said so after {time.monotonic() - stopped:.2f}s "
      f"(refresh {REFRESH}s)")
subprocess.run(start_cmd, shell=True, check=True)
started = time.monotonic()
read_until("Prometheus answered", 60, "Prometheus back")
print(f"ok: Prometheus back: the header recovered {time.monotonic() - started:.2f}s after its start")
press("q")
try:
    code = proc.wait(timeout=10)
except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)
    sys.exit("fleet-pty: FAIL: q did not end plugtop fleet")
if code != 0:
    sys.exit(f"fleet-pty: FAIL: plugtop fleet exited {code}")
print("fleet-pty: PASS")

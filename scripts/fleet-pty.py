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
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtscreen import Screen  # noqa: E402

plugtop, url, stop_cmd, start_cmd, *expect = sys.argv[1:]
REFRESH = 2.0
TIMEOUT = 1.0

ROWS, COLS = 50, 160
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
proc = subprocess.Popen(
    [plugtop, "fleet", "--prometheus", url, "--refresh", str(REFRESH),
     "--timeout", str(TIMEOUT), "--stale-after", "10"],
    stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    env=dict(os.environ, TERM="xterm-256color"), start_new_session=True)
os.close(slave)


screen = Screen(ROWS, COLS)


def read_until(text, seconds, what):
    """Reads the terminal until the screen shows `text`; how long it took."""
    deadline = time.monotonic() + seconds
    start = time.monotonic()
    while time.monotonic() < deadline:
        if text in screen.text():
            return time.monotonic() - start
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                screen.feed(os.read(master, 65536))
            except OSError:
                break
    sys.exit(f"fleet-pty: FAIL: {what}: never saw {text!r} within {seconds}s; screen:\n{screen.text()}")


def read_until_gone(text, seconds, what):
    """Reads the terminal until the screen no longer shows `text`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text not in screen.text():
            return
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            screen.feed(os.read(master, 65536))
    sys.exit(f"fleet-pty: FAIL: {what}: {text!r} stayed; screen:\n{screen.text()}")


def press(keys):
    os.write(master, keys.encode())
    if keys == "\x1b":
        # Alone: an Esc followed at once by a key reads as Alt+key.
        time.sleep(0.3)


took = read_until("Prometheus answered", 30, "the first screen")
print(f"fleet-pty: first screen after {took:.2f}s")
for t in expect:
    read_until(t, 10, "the first screens")
print("ok: the table shows every expected guest and the drift")
press("/mod")  # a filter: the mode column says auto for all of them
press("\r")
read_until('filter "mod"', 10, "the filter")
press("\x1b")
read_until_gone('filter "mod"', 10, "Esc clears the filter")
press("d")
read_until("the most common", 10, "the drift view")
print("ok: the drift view")
press("\x1b")
read_until_gone("the most common", 10, "Esc leaves the drift view")
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

#!/usr/bin/env bash
# How long the full-screen UI takes to absorb a paste into the what-if
# editor: SIZE MiB (default 1) inside bracketed-paste markers, and the same
# amount typed as plain keys (a terminal without bracketed paste). The
# release binary runs on the simulator in a 160x48 pseudo-terminal; the
# clock runs from the first byte written until the editor has shown its
# verdict on the text and then the help screen, asked for right after it
# (Ctrl-C closes the editor, then `?`): every byte before has been decoded,
# inserted, checked and drawn by then.
# Also the CPU plugtop used meanwhile and its peak RSS. Target: under one
# second each.
#
# usage: scripts/paste-speed.sh [SIZE_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
python3 - "${1:-1}" <<'PY'
import fcntl, os, pty, re, select, struct, sys, termios, time

size = int(float(sys.argv[1]) * (1 << 20))
CSI = re.compile(rb"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start():
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv("target/release/plugtop", ["plugtop", "--sim", "examples/scenarios/daytrader.toml",
                                            "-c", "examples/rules/recommended-modern.conf"])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    os.set_blocking(fd, False)
    return pid, fd


def seen(shown, text):
    """Whether `text` was drawn (ratatui skips unchanged cells, spaces too)."""
    return text.replace(b" ", b"") in CSI.sub(b"", bytes(shown[-200_000:])).replace(b" ", b"")


def pump(fd, shown, data=b"", until=None):
    """Writes `data` while reading the screen; then reads until `until` shows."""
    deadline = time.monotonic() + 120
    while data or (until and not seen(shown, until)):
        if time.monotonic() > deadline:
            sys.exit(f"never saw {until!r}")
        readable, writable, _ = select.select([fd], [fd] if data else [], [], 10)
        if readable:
            try:
                shown += os.read(fd, 1 << 16)
            except OSError:
                sys.exit("plugtop ended")
        if writable:
            data = data[os.write(fd, data[:1 << 16]):]


def measure(name, text):
    pid, fd = start()
    shown = bytearray()
    pump(fd, shown, until=b"OBSERVE")
    pump(fd, shown, b"w", until=b"What-if: HOTPLUG")
    del shown[:]
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    # The editor's verdict on the long line shows the text went in; the
    # help after it that every byte before it was taken.
    pump(fd, shown, text, until=b"line longer than 2048 characters")
    pump(fd, shown, b"\x03?", until=b"Keys (any key closes)")
    t1, cpu1 = time.monotonic(), cpu_seconds(pid)
    peak = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmHWM"))
    os.write(fd, b"xq")
    os.waitpid(pid, 0)
    os.close(fd)
    print(f"{name}: {len(text) / (1 << 20):.2f} MiB absorbed in {t1 - t0:.3f} s, "
          f"{cpu1 - cpu0:.2f} s of plugtop's CPU, peak RSS {peak / 1024:.1f} MiB (target < 1 s)")


unit = b"(onumcpus < 2) & (idle > 50) | q A y \r\n"
body = (unit * (size // len(unit) + 1))[:size]
measure("bracketed paste", b"\x1b[200~" + body + b"\x1b[201~")
keys = body.replace(b"\r\n", b"  ")
measure("plain keys     ", keys)
PY

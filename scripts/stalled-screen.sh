#!/usr/bin/env bash
# What a terminal nobody reads (a stalled SSH link) costs the full-screen
# UI in memory: plugtop runs the simulator at 100 readings a second in a
# pseudo-terminal that is read for the first 2 s and then never again, so
# the screen thread blocks in a write while the control thread goes on.
# Prints the RSS every 5 s for SECONDS (default 45); it must level off
# (what waits for the screen is bounded by tui::mailbox), not grow with
# time. Then SIGTERM: the guest is given back and plugtop ends although
# the terminal is still not read.
#
# usage: scripts/stalled-screen.sh [SECONDS]
#        PLUGTOP=target/debug/plugtop scripts/stalled-screen.sh  (no build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${PLUGTOP:-}" ]]; then
    cargo build --release --quiet
    PLUGTOP=target/release/plugtop
fi
python3 - "${1:-45}" "$PLUGTOP" <<'PY'
import fcntl, os, pty, select, signal, struct, sys, termios, time

seconds, binary = float(sys.argv[1]), sys.argv[2]


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm-256color"
    os.execv(binary, [binary, "--sim", "examples/scenarios/webserver.toml",
                      "--interval", "0.01"])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
start = time.monotonic()
while time.monotonic() - start < 2:
    if select.select([fd], [], [], 0.1)[0]:
        try:
            os.read(fd, 1 << 16)
        except OSError:
            break
print("terminal no longer read")
samples = []
next_at = time.monotonic()
while time.monotonic() - start < 2 + seconds:
    now = time.monotonic()
    if now >= next_at:
        samples.append(rss_mib(pid))
        print(f"{now - start:5.0f} s  RSS {samples[-1]:6.1f} MiB", flush=True)
        next_at += 5
    time.sleep(0.2)
os.kill(pid, signal.SIGTERM)
deadline = time.monotonic() + 10
ended = None
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        ended = os.waitstatus_to_exitcode(status)
        break
    time.sleep(0.1)
if ended is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(f"after SIGTERM: {'exit ' + str(ended) if ended is not None else 'still running, killed'}")
half = samples[len(samples) // 2]
print(f"growth over the second half: {samples[-1] - half:+.1f} MiB")
PY

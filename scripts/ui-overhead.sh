#!/usr/bin/env bash
# CPU use of the full-screen UI at a 1-second interval, in a 160x48 tmux
# pane, observing this machine with the built-in rules, over DURATION
# seconds (default 120). CPU from /proc/PID/task/*/schedstat (nanoseconds).
#
# usage: scripts/ui-overhead.sh [DURATION_SECONDS]   (needs tmux)
#        PLUGTOP_BIN=/path/to/plugtop scripts/ui-overhead.sh 60   (compare builds)
#        PLUGTOP_ROOT=DIR scripts/ui-overhead.sh 60   (observe a root laid out like /,
#        e.g. one of 65,536 CPUs as scripts/big-root.sh builds it)
#        SYSCALLS=1 scripts/ui-overhead.sh 60   (instead of the CPU time: the system
#        calls a second of every thread, counted by `strace -c -f` attached to each;
#        needs strace)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-120}
bin=${PLUGTOP_BIN:-target/release/plugtop}
[ -n "${PLUGTOP_BIN:-}" ] || cargo build --release --quiet
session=plugtop-overhead-$$
tmux new-session -d -s "$session" -x 160 -y 48 "$bin --interval 1 ${PLUGTOP_ROOT:+--root $PLUGTOP_ROOT}"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT
sleep 3
pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
if [ -n "${SYSCALLS:-}" ]; then
    counts=$(mktemp)
    mapfile -t tasks < <(ls /proc/"$pid"/task)
    timeout -s INT "$duration" strace -f -c -o "$counts" "${tasks[@]/#/-p}" || true
    total=$(awk '$NF == "total" {print $4}' "$counts")
    sed -n '1,12p' "$counts"
    echo "system calls in ${duration} s: $total = $(python3 -c "print(f'{$total / $duration:.2f}')") a second"
    rm -f "$counts"
    exit 0
fi
cpu_ns() { cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {print s}'; }
switches() { cat /proc/"$pid"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
l0=$(cut -d" " -f1-3 /proc/loadavg)
t0=$(cpu_ns); v0=$(switches); s0=$(date +%s.%N)
sleep "$duration"
t1=$(cpu_ns); v1=$(switches); s1=$(date +%s.%N)
rss=$(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status)
tmux capture-pane -p -t "$session" | head -3
python3 - "$t0" "$t1" "$v0" "$v1" "$s0" "$s1" "$rss" "$l0" <<'PY'
import sys
t0, t1, v0, v1 = (int(x) for x in sys.argv[1:5])
wall = float(sys.argv[6]) - float(sys.argv[5])
cpu = (t1 - t0) / 1e9
print(f"UI over {wall:.0f} s in a 160x48 pane: {cpu * 1e3:.1f} ms CPU = {cpu / wall * 100:.3f}% of one CPU (target < 0.08%)")
print(f"load (/proc/loadavg 1/5/15 min) before: {sys.argv[8]}; after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
print(f"voluntary context switches: {(v1 - v0) / wall:.2f} per second; VmRSS {int(sys.argv[7]) / 1024:.1f} MiB")
PY

#!/usr/bin/env bash
# Recording and replaying a guest of 65,536 CPUs (issue 23): builds such a
# root in a temporary directory (proc/stat with a line per CPU and the CPU
# lists), then times `plugtop record` of 2 and of 12 readings and
# `plugtop eval --replay` of both recordings. The difference of the two
# runs, over the 10 extra readings, is what one reading costs; it prints
# that and fails over 50 ms. Then it adds a cpuN/online flag per CPU and
# prints the same figures, for information: reading 65,536 sysfs files
# costs what the file system makes it cost, not the recording.
#
#   scripts/big-root.sh [PLUGTOP_BIN] [CPUS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/plugtop}"
cpus="${2:-65536}"
[ -x "$bin" ] || cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
cp -r tests/fixtures/roots/newkernel "$root"
python3 - "$root" "$cpus" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
lines = [f'cpu  {n*10} 0 {n*5} {n*100} 0 0 0 0 0 0']
lines += [f'cpu{i} {10+i%7} 0 5 100 0 0 0 0 0 0' for i in range(n)]
lines += ['intr 0', 'ctxt 1', 'btime 1', 'processes 1', 'procs_running 1', 'procs_blocked 0']
open(f'{root}/proc/stat', 'w').write('\n'.join(lines) + '\n')
cpu = f'{root}/sys/devices/system/cpu'
for f in ('present', 'online'):
    open(f'{cpu}/{f}', 'w').write(f'0-{n-1}\n')
PY
rules="$work/big.rules"
printf 'UPDATE="1"\nCPU_MIN="1"\nCPU_MAX="0"\nHOTPLUG="idle < 1"\nHOTUNPLUG="idle > 1000000"\n' > "$rules"
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}
measure() {
    local what="$1" r2 r12 e2 e12
    rm -f "$work"/*.rec
    r2=$(seconds "$bin" record --root "$root" --count 2 --interval 0.001 -o "$work/2.rec")
    r12=$(seconds "$bin" record --root "$root" --count 12 --interval 0.001 -o "$work/12.rec")
    e2=$(seconds "$bin" eval -c "$rules" --replay "$work/2.rec")
    e12=$(seconds "$bin" eval -c "$rules" --replay "$work/12.rec")
    printf '%s CPUs, %s: record 2 readings %ss, 12 readings %ss; replay 2 %ss, 12 %ss; recording %s bytes\n' \
        "$cpus" "$what" "$r2" "$r12" "$e2" "$e12" "$(stat -c %s "$work/12.rec")"
    awk -v r2="$r2" -v r12="$r12" -v e2="$e2" -v e12="$e12" 'BEGIN {
        rec = (r12 - r2) / 10 * 1000; rep = (e12 - e2) / 10 * 1000
        printf "  per reading: record %.1f ms, replay %.1f ms\n", rec, rep
        exit !(rec < 50 && rep < 50)
    }'
}
fail=0
measure "proc/stat and CPU lists" || { echo "  ^ over 50 ms"; fail=1; }
python3 - "$root/sys/devices/system/cpu" "$cpus" <<'PY'
import os, sys
cpu, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n):
    os.makedirs(f'{cpu}/cpu{i}', exist_ok=True)
    open(f'{cpu}/cpu{i}/online', 'w').write('1\n')
PY
measure "and a cpuN/online flag each (information only)" || true
exit "$fail"

#!/usr/bin/env bash
# Resident memory of `plugtop run` over a long run: the release build in
# autonomous mode at UPDATE=1 (examples/rules/recommended-modern.conf) on a
# simulated kernel of ../shared/tools/cpuplugd-cost (fakekernel.py, with
# kernsync.so preloaded as cost-floor.sh does), under a load that keeps both
# groups acting (busy, idle and memory-hungry phases in turn). Prints, at 1
# minute and then every STEP minutes up to MINUTES, VmRSS and VmHWM and
# where the resident pages are (/proc/PID/status: anonymous = heap and stacks,
# file = the binary's text and data touched) and per mapped object
# (/proc/PID/smaps), the threads, and the number of intervals the log says
# acted. `plugtop run` replaces itself with plugtop-run when that is beside
# it (src/cli/run_exe.rs): the program named is the one running. Both daemon and kernel run under nice.
#
# usage: scripts/run-rss.sh [MINUTES] [STEP]   (default 60 and 10; needs gcc, python3)
#        PLUGTOP_BIN=path scripts/run-rss.sh 5 1   (another build, not built here)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
step=${2:-10}
harness=$(cd ../shared/tools/cpuplugd-cost && pwd)
bin=${PLUGTOP_BIN:-target/release/plugtop}
[ -n "${PLUGTOP_BIN:-}" ] || cargo build --release --quiet --locked
bin=$(readlink -f "$bin")
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
gcc -O2 -shared -fPIC -o "$work/kernsync.so" "$harness/kernsync.c" -ldl

secs=$((minutes * 60))
# busy 30 s (CPUs plugged), idle 40 s (unplugged, pool grows), memhog 20 s
# (free memory drops, direct scans: the pool shrinks), over and over.
load=$(python3 -c "print(','.join(['busy:30,idle:40,memhog:20'] * ($secs // 90 + 2)))")
mkdir -p "$work/root/run/lock" "$work/root/var/lock"
nice -n 19 python3 "$harness/fakekernel.py" "$work/root" --cpus 4 --online 2 \
  --script "$load" --duration $((secs + 60)) >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s $work/root/proc/stat ]] && break; sleep 0.1; done
printf 'vendor_id       : IBM/S390\n# processors    : 4\nprocessor 0: version = FF,  identification = 0A1B2C,  machine = 3906\n' \
  >"$work/root/proc/cpuinfo"
LD_PRELOAD=$work/kernsync.so nice -n 19 "$bin" run -f -c examples/rules/recommended-modern.conf \
  --root "$work/root" --mode auto --state "$work/state" >"$work/run.log" 2>&1 &
daemon=$!
pids+=("$daemon")

report() {
  local at=$1
  kill -0 "$daemon" 2>/dev/null || { echo "plugtop run ended early:"; tail -5 "$work/run.log"; exit 1; }
  python3 - "$daemon" "$at" "$work/run.log" <<'PY'
import os, re, sys
pid, at, log = sys.argv[1], sys.argv[2], sys.argv[3]
status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
kib = lambda s: int(s.split()[0])
lines = sum(1 for _ in open(log))
exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
print(f"{at:>6} min  VmRSS {kib(status['VmRSS']) / 1024:5.2f} MiB  VmHWM {kib(status['VmHWM']) / 1024:5.2f} MiB"
      f"  anon {kib(status['RssAnon']) / 1024:5.2f}  file {kib(status['RssFile']) / 1024:5.2f} MiB"
      f"  threads {status['Threads'].strip()}  log lines {lines}  ({exe})")
# Where the resident pages are (/proc/PID/smaps): KiB per mapped object,
# the program's text apart from the rest of it.
where, name, perm = {}, None, None
for l in open(f"/proc/{pid}/smaps"):
    f = l.split()
    if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", l):
        perm = f[1]
        name = os.path.basename(f[5]) if len(f) > 5 else "anonymous"
        if name == exe:
            name = f"{exe} text" if "x" in perm else f"{exe} data"
    elif f[0] == "Rss:":
        where[name] = where.get(name, 0) + int(f[1])
print("         " + ", ".join(f"{k} {v}" for k, v in sorted(where.items(), key=lambda kv: -kv[1]) if v) + " (KiB)")
PY
}
echo "plugtop run ($bin) on a simulated kernel, ${minutes} min"
sleep 60
report 1
t=1
while [ "$t" -lt "$minutes" ]; do
  next=$(( (t / step + 1) * step ))
  [ "$next" -gt "$minutes" ] && next=$minutes
  sleep $(( (next - t) * 60 ))
  t=$next
  report "$t"
done

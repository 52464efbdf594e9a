#!/usr/bin/env bash
# The floor under plugtop's cost figures: a C reader (scripts/floor/
# reader-floor.c) that makes only the system calls a cpuplugd-like daemon
# cannot avoid each interval (the four /proc tables, the online list,
# cmm_pages read and written, one sleep), measured in the same sitting as
# `plugtop run`, in the two places the cost targets are measured:
#   1. a simulated kernel of ../shared/tools/cpuplugd-cost (plain files,
#      opened anew each interval), beside `plugtop run` on an identical one;
#   2. the live /proc (files held open), beside scripts/overhead.sh.
# CPU time from schedstat, ns per second of wall time. What plugtop costs
# above the floor is its own work (parsing, rules, log, checks); the floor
# is the kernel's, and moves with the machine.
#
# usage: scripts/cost-floor.sh [SECS]   (default 60; needs gcc, python3;
#        part 2 runs overhead.sh, which needs root or user namespaces)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
harness=$(cd ../shared/tools/cpuplugd-cost && pwd)
cargo build --release --quiet --locked
bin=$PWD/target/release/plugtop
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
gcc -O2 -Wall -o "$work/floor" scripts/floor/reader-floor.c
gcc -O2 -shared -fPIC -o "$work/kernsync.so" "$harness/kernsync.c" -ldl
cpu() { awk '{print $1}' "/proc/$1/schedstat"; }

echo "== simulated kernel (plain files), ${secs}s"
zvm='vendor_id       : IBM/S390\n# processors    : 4\nprocessor 0: version = FF,  identification = 0A1B2C,  machine = 3906\n'
for r in F P; do
  mkdir -p "$work/$r/run/lock" "$work/$r/var/lock"
  python3 "$harness/fakekernel.py" "$work/$r" --cpus 4 --online 2 \
    --script busy:20,idle:30,busy:20,idle:30,busy:1000 --duration $((secs + 30)) >/dev/null 2>&1 &
  pids+=($!)
done
for r in F P; do
  for _ in $(seq 100); do [[ -s $work/$r/proc/stat ]] && break; sleep 0.1; done
  printf "$zvm" >"$work/$r/proc/cpuinfo"
done
"$work/floor" "$work/F" reopen proc/sys/vm/cmm_pages &
floor=$!; pids+=("$floor")
LD_PRELOAD=$work/kernsync.so "$bin" run -f -c examples/rules/recommended-modern.conf \
  --root "$work/P" --mode auto --state "$work/state" >"$work/run.log" 2>&1 &
daemon=$!; pids+=("$daemon")
sleep 2
f0=$(cpu "$floor"); d0=$(cpu "$daemon"); sleep "$secs"; f1=$(cpu "$floor"); d1=$(cpu "$daemon")
f=$(( (f1 - f0) / secs )); d=$(( (d1 - d0) / secs ))
echo "floor $f ns/s, plugtop run $d ns/s: plugtop's own work $((d - f)) ns/s"
kill "$floor" "$daemon" 2>/dev/null || true

echo "== live /proc (held open), ${secs}s"
echo 0 >"$work/pool"
"$work/floor" / kept "$work/pool" &
floor=$!; pids+=("$floor")
sleep 1
f0=$(cpu "$floor")
PLUGTOP_BIN=$bin scripts/overhead.sh "$secs" | grep '^CPU:'
f1=$(cpu "$floor")
echo "floor $(( (f1 - f0) / (secs + 2) )) ns/s (over overhead.sh's run, its start included)"

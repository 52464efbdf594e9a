#!/usr/bin/env bash
# The real cpuplugd and several builds of `plugtop run`, each on its own
# simulated kernel (../shared/tools/cpuplugd-cost: the same load script, the
# same rules, UPDATE=1), all at once for SECONDS: builds compared in one
# sitting share the machine's load, which moves single runs by a third on a
# shared 2-core machine. Prints each daemon's CPU time (schedstat, ns per
# second) and each build's ratio to cpuplugd. Run it several times, with the
# builds in another order each time, and compare the ratios of one sitting.
#
# usage: scripts/cost-side-by-side.sh SECONDS PLUGTOP_BIN...
#        (RULES=file picks the rules; needs root, gcc, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 SECONDS PLUGTOP_BIN..." >&2; exit 2; }
secs=$1
shift
harness=$(cd ../shared/tools/cpuplugd-cost && pwd)
rules=$(readlink -f "${RULES:-examples/rules/recommended-modern.conf}")
work=$(mktemp -d)
pids=()
kernels=()
cleanup() {
  kill "${pids[@]}" "${kernels[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/harness"
cp "$harness"/* "$work/harness/"
tar -C "$work" -xJf "$work/harness/s390-tools-cpuplugd-src.tar.xz"
"$work/harness/build-cpuplugd.sh" >/dev/null
gcc -O2 -shared -fPIC -o "$work/harness/kernsync.so" "$work/harness/kernsync.c" -ldl
zvm='vendor_id       : IBM/S390\n# processors    : 4\nprocessor 0: version = FF,  identification = 0A1B2C,  machine = 3906\n'
count=$(($# + 1))
for r in $(seq 0 $((count - 1))); do
  mkdir -p "$work/$r/run/lock" "$work/$r/var/lock"
  python3 "$work/harness/fakekernel.py" "$work/$r" --cpus 4 --online 2 \
    --script busy:20,idle:30,busy:20,idle:30,busy:1000 --duration $((secs + 30)) >/dev/null 2>&1 &
  kernels+=($!)
done
for r in $(seq 0 $((count - 1))); do
  for _ in $(seq 100); do [ -s "$work/$r/proc/stat" ] && break; sleep 0.1; done
  printf "$zvm" > "$work/$r/proc/cpuinfo"
done
unshare -m --propagation private sh -c "mount -n --bind $work/0/run /run && mount -n --bind $work/0/sys /sys && mount -n --bind $work/0/proc /proc && exec env LD_PRELOAD=$work/harness/kernsync.so $work/build/cpuplugd -f -c $rules" > "$work/cpuplugd.log" 2>&1 &
pids+=($!)
names=(cpuplugd)
i=1
for bin in "$@"; do
  LD_PRELOAD="$work/harness/kernsync.so" "$bin" run -f -c "$rules" --root "$work/$i" --mode auto --state "$work/state$i" > "$work/plugtop$i.log" 2>&1 &
  pids+=($!)
  names+=("$bin")
  i=$((i + 1))
done
sleep 2
cpu() { awk '{print $1}' /proc/"$1"/schedstat; }
start=()
for p in "${pids[@]}"; do start+=("$(cpu "$p")"); done
sleep "$secs"
base=0
for k in "${!pids[@]}"; do
  ns=$(( ($(cpu "${pids[$k]}") - ${start[$k]}) / secs ))
  if [ "$k" -eq 0 ]; then
    base=$ns
    echo "cpuplugd: $ns ns/s"
  else
    echo "${names[$k]}: $ns ns/s, ratio $(awk -v a="$base" -v b="$ns" 'BEGIN {printf "%.3f", b / a}')"
  fi
done
echo "over ${secs}s, load $(cut -d' ' -f1-3 /proc/loadavg)"

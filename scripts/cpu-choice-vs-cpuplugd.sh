#!/bin/bash
# Which CPU: the real cpuplugd and `plugtop run` on two identical simulated 12-CPU kernels,
# same rule file, same load, side by side. Both must plug and unplug the same CPU in the same
# interval. Not part of CI: needs root (cpuplugd's /proc and /sys are fixed paths, so it runs
# in a private mount namespace), gcc and python3, and plugtop built with
# `cargo build --release` (or PLUGTOP=path).
#
# The kernels and cpuplugd come from ../shared/tools/cpuplugd-cost (HARNESS=dir to use
# another copy): fakekernel.py lays out /proc and /sys under a directory (cpu0 has no
# `online` file, as on most machines), kernsync.so updates cpu/online as soon as a
# cpuN/online write is done, build-cpuplugd.sh builds cpuplugd from its sources unpatched.
#
# The load: busy (every online CPU busy, loadavg = online + 1) and idle (loadavg 0.1), so the
# rules below plug one CPU per interval while busy (20 s: up to all 12, cpu10 and cpu11
# before cpu2), unplug one per interval while idle (20 s: down to cpu0 alone, cpu1, cpu10,
# cpu11, cpu2, ...), then plug six and unplug them again from one CPU.
#
# Each daemon's intervals are numbered from its first reading (the one that only fills the
# history is 1): cpuplugd's verbose "New interval" banners (and its "cpuN will be
# enabled/disabled"), plugtop's verbose rows (and its "plugged cpuN"). Both start together,
# half a second off the load's phase changes (at whole seconds of the kernels' clocks), so
# the same interval sees the same phase. A sampler also records each root's sequence of
# online sets, which must be equal.
#
# usage: scripts/cpu-choice-vs-cpuplugd.sh [SECS]    (default 64; KEEP_T=dir keeps the files)
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
harness=${HARNESS:-$repo/../shared/tools/cpuplugd-cost}
bin=${PLUGTOP:-$repo/target/release/plugtop}
secs=${1:-64}
script=busy:20,idle:20,busy:6,idle:1000
[[ $(id -u) == 0 ]] || { echo "needs root (unshare -m for cpuplugd's fixed paths)" >&2; exit 2; }
[[ -x $bin ]] || { echo "no $bin: run cargo build --release first, or set PLUGTOP" >&2; exit 2; }
T=${KEEP_T:-$(mktemp -d)}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [[ -n ${KEEP_T:-} ]] || rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/harness"
cp "$harness"/* "$T/harness/"
tar -C "$T" -xJf "$T/harness/s390-tools-cpuplugd-src.tar.xz"
"$T/harness/build-cpuplugd.sh" >"$T/build.log" 2>&1 || { echo "cpuplugd build failed:"; cat "$T/build.log"; exit 1; }
gcc -O2 -shared -fPIC -o "$T/harness/kernsync.so" "$T/harness/kernsync.c" -ldl || exit 1
cat >"$T/rules.conf" <<'EOF'
UPDATE="1"
CPU_MIN="1"
CPU_MAX="12"
HOTPLUG="loadavg > onumcpus"
HOTUNPLUG="loadavg < 1"
EOF
zvm='vendor_id       : IBM/S390\n# processors    : 12\nprocessor 0: version = FF,  identification = 0A1B2C,  machine = 3906\n'
t0=$(date +%s.%N)
for r in A B; do
  mkdir -p "$T/$r/run/lock" "$T/$r/var/lock"
  python3 "$T/harness/fakekernel.py" "$T/$r" --cpus 12 --online 2 --script "$script" \
    --duration $((secs + 30)) >/dev/null 2>&1 &
  pids+=($!)
done
for r in A B; do
  for _ in $(seq 100); do [[ -s $T/$r/proc/stat ]] && break; sleep 0.1; done
  printf "$zvm" >"$T/$r/proc/cpuinfo"
done
# Each root's online set, whenever it changes (cpu0 has no online file: always online).
# A file caught between a writer's truncation and its write reads empty: that sample is
# dropped.
sampler() {
  local dir=$1/sys/devices/system/cpu last="" now i v
  while :; do
    now=0
    for i in 1 2 3 4 5 6 7 8 9 10 11; do
      v=$(cat "$dir/cpu$i/online" 2>/dev/null)
      [[ -z $v ]] && now="" && break
      [[ $v == 1 ]] && now="$now,$i"
    done
    [[ -n $now && $now != "$last" ]] && echo "$now" && last=$now
    sleep 0.05
  done
}
sampler "$T/A" >"$T/a.states" & pids+=($!)
sampler "$T/B" >"$T/b.states" & pids+=($!)
# Start both daemons 1.5 s after the kernels' clocks started: every reading then falls
# about half a second away from the load's phase changes (at whole seconds).
sleep "$(awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + 1.5 - now; print (d > 0 ? d : 0) }')"
unshare -m --propagation private sh -c "mount -n --bind $T/A/run /run && mount -n --bind $T/A/sys /sys && mount -n --bind $T/A/proc /proc && exec env LD_PRELOAD=$T/harness/kernsync.so $T/build/cpuplugd -f -V -c $T/rules.conf" >"$T/a.log" 2>&1 &
pa=$!; pids+=($pa)
LD_PRELOAD=$T/harness/kernsync.so "$bin" run -f -V -c "$T/rules.conf" --root "$T/B" --mode auto \
  --state "$T/stateB" >"$T/b.log" 2>&1 &
pb=$!; pids+=($pb)
sleep "$secs"
# Stop both before comparing: the exit's restore is a documented difference (plugtop puts
# back the same CPUs, cpuplugd the same number), so only the actions before it count.
for f in a.log b.log a.states b.states; do cp "$T/$f" "$T/before-stop.$f"; done
kill -TERM "$pa" "$pb" 2>/dev/null
# interval action cpu, one per line: cpuplugd counts its "New interval" banners ...
awk '/New interval/ { n++ }
     { s = $0; while (match(s, /cpu[0-9]+ will be (enabled|disabled)/)) {
         w = substr(s, RSTART, RLENGTH); split(w, f, " ")
         print n, (f[4] == "enabled" ? "plug" : "unplug"), f[1]
         s = substr(s, RSTART + RLENGTH) } }' "$T/before-stop.a.log" >"$T/a.actions"
# ... plugtop its verbose rows (time, reading, rules), whose reading numbers count from 0.
awk '$2 ~ /^[0-9]+$/ { n = $2 + 1 }
     /^(un)?plugged cpu[0-9]+$/ { print n, ($1 == "plugged" ? "plug" : "unplug"), $2 }' \
  "$T/before-stop.b.log" >"$T/b.actions"
echo "cpuplugd: $(wc -l <"$T/a.actions") actions; plugtop run: $(wc -l <"$T/b.actions") actions (intervals numbered from each daemon's first reading)"
paste -d' ' "$T/a.actions" "$T/b.actions" | awk '{ printf "  interval %3s  %-6s %-5s | interval %3s  %-6s %-5s %s\n", $1, $2, $3, $4, $5, $6, ($1 == $4 && $2 == $5 && $3 == $6) ? "" : "  <-- differs" }'
fail=0
if ! diff -q "$T/a.actions" "$T/b.actions" >/dev/null; then
  echo "DIFFERENT actions (cpuplugd < > plugtop):"; diff "$T/a.actions" "$T/b.actions"; fail=1
fi
if [[ ! -s $T/a.actions ]] || ! grep -q 'plug cpu10' "$T/a.actions" || ! grep -q 'unplug cpu9' "$T/a.actions"; then
  echo "the load did not walk the CPUs as planned (no plug of cpu10 or unplug of cpu9)"; fail=1
fi
if diff -q "$T/before-stop.a.states" "$T/before-stop.b.states" >/dev/null; then
  echo "online sets: the same $(wc -l <"$T/before-stop.a.states") in the same order on both roots"
else
  echo "DIFFERENT online sets (cpuplugd's root < > plugtop's root):"
  diff "$T/before-stop.a.states" "$T/before-stop.b.states"; fail=1
fi
if ((fail)); then echo "FAIL (files in $T; KEEP_T=dir keeps them)"; exit 1; fi
echo "OK: every action names the same CPU in the same interval"

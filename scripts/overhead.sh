#!/usr/bin/env bash
# Overhead of `plugtop run` in autonomous mode at UPDATE=1: CPU time (from
# /proc/PID/task/*/schedstat, nanoseconds), resident memory (VmRSS, VmHWM)
# and wake-ups (voluntary context switches), over DURATION seconds.
#
# It acts on a temporary root whose /proc and CPU-list files are this
# machine's, bind-mounted there inside a private mount namespace (made by
# `unshare`: as root, or as a user through a user namespace), so the daemon
# reads the live kernel and nothing outside the script sees the mounts. The
# files it writes (cpuN/online, cmm_pages) are plain files in the temporary
# root: nothing real is ever written. (Symbolic links would not do: plugtop
# resolves every path below its root as in a chroot, so a link to
# /proc/stat means ROOT/proc/stat.) It checks that the daemon keeps the
# bind-mounted kernel files open, as it does on a real root.
#
# usage: scripts/overhead.sh [DURATION_SECONDS]   (default 300)
#        PLUGTOP_BIN=/path/to/plugtop scripts/overhead.sh 60   (compare builds)
#        METRICS=1 scripts/overhead.sh 120   (with --metrics-listen on loopback,
#            scraped every 15 s by curl as Prometheus would; target < 0.03%)
set -euo pipefail
if [ -z "${PLUGTOP_OVERHEAD_NAMESPACE:-}" ]; then
  export PLUGTOP_OVERHEAD_NAMESPACE=1
  if [ "$(id -u)" -eq 0 ]; then
    exec unshare --mount --propagation private -- "$0" "$@"
  fi
  exec unshare --user --map-root-user --mount --propagation private -- "$0" "$@"
fi
cd "$(dirname "$0")/.."
duration=${1:-300}
bin=${PLUGTOP_BIN:-target/release/plugtop}
[ -n "${PLUGTOP_BIN:-}" ] || cargo build --release --quiet
root=$(mktemp -d)
pid=""
scraper=""
mounted=()
cleanup() {
  [ -n "$scraper" ] && kill "$scraper" 2>/dev/null || true
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  # Unmounted first (lazily if still busy), so removing the root never
  # touches a kernel file.
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT

mkdir -p "$root/proc/sys/vm" "$root/sys/devices/system/cpu"
bind() {
  : > "$2"
  mount --bind "$1" "$2"
  mounted+=("$2")
}
for f in stat loadavg meminfo vmstat; do bind "/proc/$f" "$root/proc/$f"; done
for f in present online possible; do
  [ -e "/sys/devices/system/cpu/$f" ] && bind "/sys/devices/system/cpu/$f" "$root/sys/devices/system/cpu/$f"
done
echo 0 > "$root/proc/sys/vm/cmm_pages"
# cpuplugd (and plugtop run) manage memory only on a z/VM guest, which they
# recognise by /proc/cpuinfo; this root says it is one, so both groups run.
printf 'vendor_id       : IBM/S390\nprocessor 0: version = FF,  identification = 0ABCDE,  machine = 8561\n' > "$root/proc/cpuinfo"
for d in /sys/devices/system/cpu/cpu[0-9]*; do
  n=$(basename "$d")
  mkdir -p "$root/sys/devices/system/cpu/$n"
  if [ -f "$d/online" ]; then cat "$d/online" > "$root/sys/devices/system/cpu/$n/online"; fi
done

# The recommended rules, with CPU_MIN at this machine's CPU count: the
# bind-mounted online list cannot follow the temporary root's cpuN/online
# files, so without it every interval would decide an unplug that never
# shows. With it, both groups evaluate every rule each interval and the
# CPU limit holds, as on a guest in steady state.
rules="$root/rules.conf"
sed "s/^CPU_MIN=.*/CPU_MIN=\"$(nproc)\"/" examples/rules/recommended-modern.conf > "$rules"
metrics=()
target="0.02%"
if [ -n "${METRICS:-}" ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  metrics=(--metrics-listen "127.0.0.1:$port")
  target="0.03% with metrics scraped every 15 s"
fi
"$bin" run -f -c "$rules" --root "$root" "${metrics[@]}" > "$root/log" 2>&1 &
pid=$!
sleep 3
if [ -n "${METRICS:-}" ]; then
  ( while sleep 15; do
      curl -sf -H 'Accept: application/openmetrics-text;version=1.0.0' "http://127.0.0.1:$port/metrics" > "$root/scrape" || echo "scrape failed" >> "$root/log"
    done ) &
  scraper=$!
fi

# The kernel files the daemon holds open (it re-reads them each interval
# instead of opening them again): every bind-mounted one, as on a real root,
# but cpu/possible, which is fixed at boot and read once at the start.
held=$(for fd in /proc/"$pid"/fd/*; do readlink "$fd"; done 2>/dev/null | grep -c "^$root/\(proc\|sys\)/" || true)
want=$(printf '%s\n' "${mounted[@]}" | grep -vc '/possible$' || true)
echo "kernel files held open: $held of $want (cpu/possible is read once)"
if [ "$held" -ne "$want" ]; then
  echo "  ^ the daemon re-opens kernel files each interval (not told by fstatfs?)"
fi

cpu_ns() { cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {print s}'; }
switches() { cat /proc/"$pid"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
t0=$(cpu_ns); v0=$(switches); s0=$(date +%s.%N)
sleep "$duration"
t1=$(cpu_ns); v1=$(switches); s1=$(date +%s.%N)
rss=$(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status)
hwm=$(awk '/^VmHWM/ {print $2}' /proc/"$pid"/status)
threads=$(ls /proc/"$pid"/task | wc -l)

python3 - "$t0" "$t1" "$v0" "$v1" "$s0" "$s1" "$rss" "$hwm" "$threads" "$target" <<'PY'
import sys
t0, t1, v0, v1 = (int(x) for x in sys.argv[1:5])
s0, s1 = float(sys.argv[5]), float(sys.argv[6])
rss, hwm, threads = int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
wall = s1 - s0
cpu = (t1 - t0) / 1e9
print(f"measured over {wall:.0f} s, {threads} threads")
print(f"CPU: {cpu * 1e3:.1f} ms in all = {cpu / wall * 1e6:.0f} us per second = {cpu / wall * 100:.4f}% of one CPU (target < {sys.argv[10]})")
print(f"memory: VmRSS {rss / 1024:.1f} MiB, VmHWM {hwm / 1024:.1f} MiB (target < 8 MiB)")
print(f"voluntary context switches: {v1 - v0} over {wall:.0f} intervals of 1 s = {(v1 - v0) / wall:.2f} per interval")
PY
echo "log: $(wc -l < "$root/log") lines; last: $(tail -1 "$root/log")"
if [ -n "${METRICS:-}" ]; then
  echo "last scrape: $(wc -l < "$root/scrape") lines, $(grep -c 'scrape failed' "$root/log" || true) failed"
fi

#!/usr/bin/env bash
# What one interval costs, counted rather than timed: instructions
# (callgrind), system calls (strace -f) and RSS of `plugtop run` (any
# build), beside the real cpuplugd (built from ../shared/tools/cpuplugd-cost
# unpatched) and the C floor (scripts/floor/reader-floor.c, the calls no
# such daemon can avoid), each on its own simulated kernel of that set-up
# (fakekernel.py, kernsync.so), with the same rules, UPDATE=1, no -V.
#
# Per interval = (count of the long run - count of the short run) /
# intervals between them, so start-up and shutdown cancel out; the
# intervals are counted, not timed: each opening of the kernel's
# proc/stat (the simulated kernel replaces its files, so every reader opens
# it anew each interval), and each run is stopped once it has taken SHORT
# or LONG readings, however slowly a loaded machine runs it under valgrind.
# Counts do not move with the machine's load as CPU times do. Instructions are without valgrind's fallback walk (valgrind
# 3.19 has no openat2; scripts/callgrind_walk.py); system calls are
# counted under strace, where openat2 works. RSS is VmRSS at the end of the
# long run (strace's tracee).
#
# Two guests, four CPUs, 4 GiB, one CPU online, idle:
#   acting: the pool starts empty and the rules grow it every interval
#           (CMM_INC cut to a hundredth, so it still grows at the end of
#           the long run: the rules' own CMM_INC, MemFree / 40, brings the
#           guest to the MEMUNPLUG threshold in about 44 intervals);
#   steady: the pool at CMM_MAX, the CPUs at CPU_MIN: nothing acts.
# Every daemon's intervals act (or do not) alike; the first few, while the
# history fills, are in both runs and cancel.
#
# usage: scripts/cost.sh [PLUGTOP_BIN...]   (default: target/release/plugtop,
#        built first). SHORT=8 LONG=38 readings; RULES=file (default
#        examples/rules/recommended-modern.conf: steady relies on its
#        CMM_MAX and CPU_MIN); KEEP=dir keeps the profiles and traces.
# plugtop runs under valgrind with scripts/cost/valgrind-rtmax.c preloaded
# (valgrind keeps SIGRTMAX for itself).
# needs: root (the mount namespace that shows cpuplugd the simulated /proc
#        and /sys), valgrind, strace, gcc, python3. Runs everything niced;
#        about 2 x (LONG + 15) seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
short=${SHORT:-8}
long=${LONG:-38}
# An opening of the kernel's /proc/stat in valgrind's and strace's logs:
# cpuplugd "/proc/stat", the floor and plugtop "proc/stat" below the root,
# valgrind's fallback walk "stat" in proc/.
stat='(([^"()]*/)?proc/stat|stat)'
export VG_OPEN="sys_openat2? \( [^,]+, 0x[0-9a-f]+\($stat\)"
export ST_OPEN="openat2?\([^,]+, \"$stat\""
rules=$(readlink -f "${RULES:-examples/rules/recommended-modern.conf}")
if [ $# -eq 0 ]; then
  cargo build --release --quiet --locked
  set -- "$PWD/target/release/plugtop"
fi
bins=()
for b in "$@"; do bins+=("$(readlink -f "$b")"); done
harness=$(cd ../shared/tools/cpuplugd-cost && pwd)
scripts=$PWD/scripts
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/harness" "$work/realproc"
cp "$harness"/* "$work/harness/"
tar -C "$work" -xJf "$work/harness/s390-tools-cpuplugd-src.tar.xz"
"$work/harness/build-cpuplugd.sh" >/dev/null
gcc -O2 -shared -fPIC -o "$work/harness/kernsync.so" "$work/harness/kernsync.c" -ldl
gcc -O2 -Wall -o "$work/floor" scripts/floor/reader-floor.c
gcc -O2 -Wall -shared -fPIC -o "$work/rtmax.so" scripts/cost/valgrind-rtmax.c -ldl
# acting: the same rules, the pool's step a hundredth.
sed 's|^CMM_INC=.*|CMM_INC="meminfo.MemFree / 4000"|' "$rules" >"$work/acting.conf"
cp "$rules" "$work/steady.conf"
cmm_max=$(sed -n 's/^CMM_MAX="\{0,1\}\([0-9]*\).*/\1/p' "$rules")
zvm='vendor_id       : IBM/S390\n# processors    : 4\nprocessor 0: version = FF,  identification = 0A1B2C,  machine = 3906\n'

# One simulated kernel in $1 for scenario $2; waits until it is there.
kernel() {
  local root=$1 cmm=0 mem=4096
  [ "$2" = steady ] && cmm=$cmm_max && mem=8192
  mkdir -p "$root/run/lock" "$root/var/lock" "$root/proc"
  nice -n 19 python3 "$work/harness/fakekernel.py" "$root" --cpus 4 --online 1 \
    --mem-mib "$mem" --cmm "$cmm" --script idle:100000 --duration 3600 \
    >/dev/null 2>&1 &
  pids+=($!)
  kernels+=($!)
  for _ in $(seq 200); do [ -s "$root/proc/stat" ] && break; sleep 0.1; done
  printf "$zvm" >"$root/proc/cpuinfo"
  # what valgrind and strace read of themselves, in cpuplugd's namespace
  ln -sfn "$work/realproc/self" "$root/proc/self"
  ln -sfn "$work/realproc/thread-self" "$root/proc/thread-self"
}

# Starts daemon $1 (floor, cpuplugd or a plugtop binary) under tool $2
# (callgrind or strace) on root $3 with rules $4; output to prefix $5.
start() {
  local who=$1 tool=$2 root=$3 conf=$4 out=$5 wrap preload=$work/harness/kernsync.so
  if [ "$tool" = callgrind ]; then
    preload="$preload $work/rtmax.so"
    # --trace-children: `plugtop run` replaces itself with plugtop-run
    # when that is beside it (src/cli/run_exe.rs); the same process, whose
    # profile and log then start anew at the exec.
    wrap="valgrind --tool=callgrind --trace-children=yes --trace-syscalls=yes --callgrind-out-file=$out.cg --log-file=$out.vg"
  else
    wrap="strace -f -qq -o $out.st"
  fi
  case $who in
    floor)
      LD_PRELOAD=$work/harness/kernsync.so nice -n 19 $wrap "$work/floor" "$root" reopen \
        proc/sys/vm/cmm_pages >/dev/null 2>&1 &
      ;;
    cpuplugd)
      nice -n 19 unshare -m --propagation private sh -c "mount -n -t proc proc $work/realproc &&
        mount -n --bind $root/run /run && mount -n --bind $root/sys /sys &&
        mount -n --bind $root/proc /proc &&
        exec env LD_PRELOAD=$work/harness/kernsync.so $wrap $work/build/cpuplugd -f -c $conf" \
        >"$out.log" 2>&1 &
      ;;
    *)
      LD_PRELOAD=$preload nice -n 19 $wrap "$who" run -f -c "$conf" \
        --root "$root" --mode auto --state "$out.state" >"$out.log" 2>&1 &
      ;;
  esac
  pids+=($!)
  echo $! >"$out.pid"
}

# The process that runs the daemon: valgrind runs it in its own process,
# strace in a child (for cpuplugd, of the namespace's shell that exec'd it).
daemon_pid() {
  local pid=$1 tool=$2
  if [ "$tool" = strace ]; then
    pgrep -P "$pid" | head -1
  else
    echo "$pid"
  fi
}

# Readings taken so far by the run with output prefix $1 under tool $2.
readings() {
  if [ "$2" = callgrind ]; then
    grep -cE "$VG_OPEN" "$1.vg" 2>/dev/null || true
  else
    grep -cE "$ST_OPEN" "$1.st" 2>/dev/null || true
  fi
}

# Stops each run of scenario dir $1 once it has taken its readings
# (SIGTERM: every daemon gives the guest back and exits; callgrind then
# writes its profile); the long strace runs' RSS first.
stop_runs() {
  local dir=$1 r d tool l p want left n
  local -A done_runs=()
  for _ in $(seq 3000); do
    left=0
    for r in "${runs[@]}"; do
      [ -z "${done_runs[$r]:-}" ] || continue
      read -r d tool l <<<"$r"
      want=$short
      [ "$l" = long ] && want=$long
      n=$(readings "$dir/$d.$tool.$l" "$tool")
      if [ "${n:-0}" -lt "$want" ]; then
        left=1
        continue
      fi
      p=$(daemon_pid "$(cat "$dir/$d.$tool.$l.pid")" "$tool")
      if [ "$tool" = strace ] && [ "$l" = long ]; then
        grep -E '^Vm(RSS|HWM)' "/proc/$p/status" >"$dir/$d.rss" || true
      fi
      kill -TERM "$p" 2>/dev/null || true
      done_runs[$r]=1
    done
    [ "$left" = 1 ] || return 0
    sleep 0.5
  done
  echo "some runs did not take their readings in 25 minutes" >&2
  return 1
}

daemons=(floor cpuplugd "${bins[@]}")
for scenario in acting steady; do
  dir=$work/$scenario
  mkdir -p "$dir"
  runs=()
  kernels=()
  for d in "${!daemons[@]}"; do
    for tool in callgrind strace; do
      for len in short long; do
        kernel "$dir/$d.$tool.$len" "$scenario"
        runs+=("$d $tool $len")
      done
    done
  done
  for r in "${runs[@]}"; do
    read -r d tool len <<<"$r"
    start "${daemons[$d]}" "$tool" "$dir/$d.$tool.$len" "$work/$scenario.conf" "$dir/$d.$tool.$len"
  done
  stop_runs "$dir"
  for r in "${runs[@]}"; do
    read -r d tool len <<<"$r"
    p=$(cat "$dir/$d.$tool.$len.pid")
    for _ in $(seq 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  kill "${kernels[@]}" 2>/dev/null || true
done

python3 - "$work" "${#daemons[@]}" "${daemons[@]}" <<PY
import os, re, sys
sys.path.insert(0, "$scripts")
from callgrind_walk import per_interval

work, n, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
VG_OPEN = re.compile(os.environ["VG_OPEN"])
ST_OPEN = re.compile(os.environ["ST_OPEN"])
ST_CALL = re.compile(r'^\d+ +([a-z_0-9]+)\(')

def intervals(path, pattern):
    with open(path, errors="replace") as f:
        return sum(1 for line in f if pattern.search(line))

def syscalls(path):
    with open(path, errors="replace") as f:
        return sum(1 for line in f if ST_CALL.match(line))

def figures(scenario, d):
    p = f"{work}/{scenario}/{d}"
    cg = {l: intervals(f"{p}.callgrind.{l}.vg", VG_OPEN) for l in ("short", "long")}
    st = {l: intervals(f"{p}.strace.{l}.st", ST_OPEN) for l in ("short", "long")}
    ins = per_interval(f"{p}.callgrind.short.cg", f"{p}.callgrind.long.cg",
                       cg["long"] - cg["short"])
    calls = (syscalls(f"{p}.strace.long.st") - syscalls(f"{p}.strace.short.st")) / max(
        1, st["long"] - st["short"])
    return ins["per"], calls, cg["long"] - cg["short"], st["long"] - st["short"]

def rss(d):
    kib = {}
    try:
        for line in open(f"{work}/acting/{d}.rss"):
            k, v = line.split(":")
            kib[k] = int(v.split()[0])
    except OSError:
        pass
    return kib.get("VmRSS", 0) / 1024

rows = {}
for scenario in ("acting", "steady"):
    for d in range(n):
        rows[(scenario, d)] = figures(scenario, d)
plugtops = names[2:]
heads = ["floor", "cpuplugd"] + (["plugtop"] if len(plugtops) == 1 else
                                 [f"plugtop {i + 1}" for i in range(len(plugtops))])
for h, b in zip(heads[2:], plugtops):
    print(f"{h}: {b}")
print(f"intervals measured (callgrind, strace): " + "; ".join(
    f"{s} {heads[d]} {rows[(s, d)][2]}, {rows[(s, d)][3]}" for s in ("acting", "steady")
    for d in range(n)))
print()
print("| per interval | " + " | ".join(heads) + " | " +
      " | ".join(f"{h}/cpuplugd" for h in heads[2:]) + " |")
print("|---" * (n + 1 + n - 2) + "|")
def line(label, vals, fmt):
    cells = [fmt(v) for v in vals] + [f"{v / vals[1]:.2f}" if vals[1] else "-" for v in vals[2:]]
    print(f"| {label} | " + " | ".join(cells) + " |")
for s, words in (("acting", "acting (the pool moves)"), ("steady", "steady (nothing acts)")):
    line(f"instructions, {words}", [rows[(s, d)][0] for d in range(n)], lambda v: f"{v:,.0f}")
for s in ("acting", "steady"):
    line(f"system calls, {s}", [rows[(s, d)][1] for d in range(n)], lambda v: f"{v:.1f}")
line("RSS (MiB, end of the acting run)", [rss(d) for d in range(n)], lambda v: f"{v:.1f}")
PY
echo "rules $rules; runs of $short and $long readings; load $(cut -d' ' -f1-3 /proc/loadavg)"

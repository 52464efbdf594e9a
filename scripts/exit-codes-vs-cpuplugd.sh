#!/bin/bash
# Exit codes: the real cpuplugd and `plugtop run` started on the same guest, case by case
# (a refusal at start, a fatal error while running, a stop by SIGTERM), and their exit
# statuses compared. Prints the grid; exits 1 when a status differs where plugtop means to
# exit as cpuplugd (every case but the ones marked "own", where plugtop refuses a start
# cpuplugd makes and exits 78 by design: docs/man/plugtop-run.sections, EXIT STATUS).
#
# Not part of CI: needs root (cpuplugd's /proc, /sys and /run are fixed paths, so it runs in a
# private mount namespace with the guest's directories bound over them), gcc, and plugtop
# built (PLUGTOP=path, default target/debug/plugtop). cpuplugd is built unpatched from the
# sources in ../shared/tools/cpuplugd-cost (HARNESS=dir for another copy). Each guest is a
# root `plugtop sim --serve` wrote (a 4-CPU z/VM guest with CMM), changed as the case says;
# each daemon gets its own copy. A daemon still running after 3 s is sent SIGTERM.
#
# usage: scripts/exit-codes-vs-cpuplugd.sh     (KEEP_T=dir keeps the files; CASES="a b" runs
#        only those cases)
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
harness=${HARNESS:-$repo/../shared/tools/cpuplugd-cost}
bin=${PLUGTOP:-$repo/target/debug/plugtop}
[[ $(id -u) == 0 ]] || { echo "needs root (unshare -m for cpuplugd's fixed paths)" >&2; exit 2; }
[[ -x $bin ]] || { echo "no $bin: run cargo build first, or set PLUGTOP" >&2; exit 2; }
T=${KEEP_T:-$(mktemp -d)}
holders=()
cleanup() {
  for p in "${holders[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [[ -n ${KEEP_T:-} ]] || rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/harness"
cp "$harness"/* "$T/harness/"
tar -C "$T" -xJf "$T/harness/s390-tools-cpuplugd-src.tar.xz"
"$T/harness/build-cpuplugd.sh" >"$T/build.log" 2>&1 || { echo "cpuplugd build failed:"; cat "$T/build.log"; exit 1; }
cpuplugd=$T/build/cpuplugd
"$bin" sim "$repo/examples/scenarios/daytrader.toml" --fast --duration 0:02 --serve "$T/base" \
  >/dev/null 2>&1 || { echo "plugtop sim --serve failed"; exit 1; }
rm -f "$T/base/.plugtop-sim"
mkdir -p "$T/base/run/lock" "$T/base/var"
ln -s /run/lock "$T/base/var/lock"

GOOD='UPDATE="1"
CPU_MIN="1"
CPU_MAX="0"
HOTPLUG="loadavg > onumcpus + 0.75"
HOTUNPLUG="loadavg < onumcpus - 0.25"
CMM_MIN="0"
CMM_MAX="8192"
CMM_INC="meminfo.MemFree / 40"
MEMPLUG="0"
MEMUNPLUG="meminfo.MemFree > 1000"
'
# What each case does to the guest (in the root $1) and its rule file ($1.conf).
# A case's name ends in ":own" where plugtop refuses by design (78).
case_setup() {
  local name=$1 r=$2
  printf '%s' "$GOOD" >"$r.conf"
  case $name in
  runs-and-stops) ;;
  syntax-error) printf 'UPDATE="1"\nCPU_MIN="1"\nCPU_MAX="0"\nHOTPLUG="loadavg >= 1"\nHOTUNPLUG="0"\n' >"$r.conf" ;;
  no-rule-file) rm -f "$r.conf" ;;
  no-update) sed -i '/^UPDATE/d' "$r.conf" ;;
  update-zero) sed -i 's/^UPDATE=.*/UPDATE="0"/' "$r.conf" ;;
  cpu-min-zero) sed -i 's/^CPU_MIN=.*/CPU_MIN="0"/' "$r.conf" ;;
  cpu-min-above-present) sed -i 's/^CPU_MIN=.*/CPU_MIN="64"/; s/^CPU_MAX=.*/CPU_MAX="64"/' "$r.conf" ;;
  cpu-min-without-max) sed -i '/^CPU_MAX/d' "$r.conf" ;;
  cpu-max-below-min) sed -i 's/^CPU_MIN=.*/CPU_MIN="3"/; s/^CPU_MAX=.*/CPU_MAX="2"/' "$r.conf" ;;
  defined-twice) printf 'x="1"\nx="2"\n' >>"$r.conf" ;;
  no-final-newline) printf 'UPDATE="1"\nCPU_MIN="1"\nCPU_MAX="0"\nHOTPLUG="0"\nHOTUNPLUG="0"' >"$r.conf" ;;
  history-101) sed -i 's/^HOTPLUG=.*/HOTPLUG="cpustat.user[101] > 0"/' "$r.conf" ;;
  history-100) sed -i 's/^HOTPLUG=.*/HOTPLUG="cpustat.user[100] > 0"/' "$r.conf" ;;
  nothing-to-manage) printf 'UPDATE="1"\n' >"$r.conf" ;;
  memory-only-lpar)
    printf 'UPDATE="1"\nCMM_MIN="0"\nCMM_MAX="8192"\nCMM_INC="10"\nMEMPLUG="0"\nMEMUNPLUG="1"\n' >"$r.conf"
    sed -i 's/version = FF/version = 00/' "$r/proc/cpuinfo" ;;
  lpar-cpu-and-memory) sed -i 's/version = FF/version = 00/' "$r/proc/cpuinfo" ;;
  no-cpuinfo) rm "$r/proc/cpuinfo" ;;
  empty-cpuinfo) : >"$r/proc/cpuinfo" ;;
  stale-pid-file) echo 999999999 >"$r/run/cpuplugd.pid" ;;
  garbage-pid-file) echo nonsense >"$r/run/cpuplugd.pid" ;;
  live-pid-file) echo $$ >"$r/run/cpuplugd.pid" ;;
  lock-held)
    : >"$r/run/lock/cpuplugd.lock"
    flock "$r/run/lock/cpuplugd.lock" sleep 30 &
    holders+=($!)
    sleep 0.2 ;;
  fatal-memory-rule) sed -i 's/^MEMUNPLUG=.*/MEMUNPLUG="meminfo.NoSuchField > 1"/' "$r.conf" ;;
  no-cmm-pages) rm "$r/proc/sys/vm/cmm_pages" ;;
  negative-pool:own) echo -1 >"$r/proc/sys/vm/cmm_pages" ;;
  loadavg-garbage) echo garbage >"$r/proc/loadavg" ;;
  loadavg-second-not-a-number) echo '0.5 x 0 1/2 99' >"$r/proc/loadavg" ;;
  loadavg-sign-only) echo '0.5 0 0 +/2 99' >"$r/proc/loadavg" ;;
  loadavg-garbage-no-load-rule)
    sed -i 's/^HOTPLUG=.*/HOTPLUG="idle < 10"/; s/^HOTUNPLUG=.*/HOTUNPLUG="idle > 500"/' "$r.conf"
    echo garbage >"$r/proc/loadavg" ;;
  loadavg-plus-inf-vt) printf '+0.5\v0 inf 1/2 99\n' >"$r/proc/loadavg" ;;
  bad-option | no-config-option) ;;
  esac
}

# The daemon's arguments for a case (after the program).
args_for() {
  case $1 in
  bad-option) echo "-f -x -c $2.conf" ;;
  no-config-option) echo "-f" ;;
  *) echo "-f -c $2.conf" ;;
  esac
}

# Runs "$@" for at most 3 s (then SIGTERM) and prints its exit status.
bounded() {
  "$@" >/dev/null 2>&1 &
  local p=$! i
  for i in $(seq 30); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
  kill -0 $p 2>/dev/null && kill -TERM $p
  wait $p
  echo $?
}

cases="runs-and-stops syntax-error no-rule-file no-update update-zero cpu-min-zero
  cpu-min-above-present cpu-min-without-max cpu-max-below-min defined-twice no-final-newline
  history-101 history-100 nothing-to-manage memory-only-lpar lpar-cpu-and-memory no-cpuinfo
  empty-cpuinfo stale-pid-file garbage-pid-file live-pid-file lock-held fatal-memory-rule
  no-cmm-pages bad-option no-config-option negative-pool:own loadavg-garbage
  loadavg-second-not-a-number loadavg-sign-only loadavg-garbage-no-load-rule loadavg-plus-inf-vt"
cases=${CASES:-$cases}
printf '%-24s %9s %8s  %s\n' case cpuplugd plugtop verdict
differ=0
for c in $cases; do
  for who in a b; do
    r=$T/$c-$who
    rm -rf "$r"
    cp -a "$T/base" "$r"
    case_setup "$c" "$r"
  done
  a=$(bounded unshare -m --propagation private sh -c \
    "mount -n --bind $T/$c-a/run /run && mount -n --bind $T/$c-a/sys /sys && mount -n --bind $T/$c-a/proc /proc && exec $cpuplugd $(args_for "$c" "$T/$c-a")")
  b=$(bounded "$bin" run $(args_for "$c" "$T/$c-b") --root "$T/$c-b" --state "$T/$c-b/run/plugtop/state")
  for p in "${holders[@]}"; do kill "$p" 2>/dev/null; done
  holders=()
  if [[ $a == "$b" ]]; then
    verdict=same
  elif [[ $c == *:own && $b == 78 ]]; then
    verdict="plugtop's own refusal (78)"
  else
    verdict=DIFFERENT
    differ=1
  fi
  printf '%-24s %9s %8s  %s\n' "$c" "$a" "$b" "$verdict"
done
exit $differ

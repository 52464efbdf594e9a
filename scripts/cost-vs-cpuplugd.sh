#!/usr/bin/env bash
# CPU cost of `plugtop run` against the real cpuplugd, RUNS times in a row
# (../shared/tools/cpuplugd-cost/cost.sh: two identical simulated kernels, the
# same rules, UPDATE=1, SECS seconds each), with this checkout's release build.
# Prints each run's line, the ratios' median, and checks that what plugtop
# wrote is whole: cmm_pages and every cpuN/online of its root hold exactly one
# number and a newline (writes overwrite in place, without O_TRUNC).
#
# usage: scripts/cost-vs-cpuplugd.sh [RULES] [SECS] [RUNS]
#        (default examples/rules/recommended-modern.conf 60 3; needs root,
#        gcc, python3; the figures move with the machine's load: compare
#        ratios from one sitting, and say what else was running)
set -euo pipefail
cd "$(dirname "$0")/.."
rules=${1:-examples/rules/recommended-modern.conf}
secs=${2:-60}
runs=${3:-3}
cost=../shared/tools/cpuplugd-cost/cost.sh
cargo build --release --quiet --locked
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ratios=()
for i in $(seq "$runs"); do
  line=$(KEEP_T="$work/run$i" "$cost" "$rules" "$secs" | tail -1)
  echo "run $i: $line (load $(cut -d' ' -f1-3 /proc/loadavg))"
  ratios+=("${line##* }")
  for f in "$work/run$i"/B/proc/sys/vm/cmm_pages "$work/run$i"/B/sys/devices/system/cpu/cpu*/online; do
    [[ -e $f ]] || continue
    if ! grep -qxE '[0-9]+' "$f" || [[ $(wc -l <"$f") != 1 ]]; then
      echo "FAIL: $f does not hold one number: $(od -c "$f" | head -2)"
      exit 1
    fi
  done
  rm -rf "$work/run$i"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR]=$1} END {print "median ratio plugtop/cpuplugd: " r[int((NR+1)/2)] " over " NR " runs (target <= 0.50)"}'

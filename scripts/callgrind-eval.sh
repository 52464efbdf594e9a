#!/usr/bin/env bash
# Instructions per interval of `plugtop eval --jsonl` over a long snapshot
# series, as (I(1000) - I(500)) / 500 so start-up cost cancels out.
#
# valgrind has no openat2, so under it every file of a snapshot is
# opened by fs::walk's fallback walk, component by component: the figure
# printed and held to the target is without that walk, as
# scripts/callgrind_walk.py says. Both figures are printed.
#
# usage: scripts/callgrind-eval.sh [RULE_FILE] [CASE_SNAPSHOTS]
#        PLUGTOP_BIN=/path/to/plugtop scripts/callgrind-eval.sh   (compare builds,
#        as overhead.sh and ui-overhead.sh take them)
# needs: valgrind, python3, ../shared/tools/longseries.py
set -euo pipefail
cd "$(dirname "$0")/.."
rules=${1:-examples/rules/recommended-default.conf}
src=${2:-../shared/conformance/cases/seed-recommended-oldkernel/snapshots}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${PLUGTOP_BIN:-target/release/plugtop}
[ -n "${PLUGTOP_BIN:-}" ] || cargo build --release --quiet
for n in 500 1000; do
  python3 ../shared/tools/longseries.py "$src" "$work/s$n" "$n"
  valgrind --tool=callgrind --callgrind-out-file="$work/cg$n" \
    "$bin" eval -c "$rules" --snapshots "$work/s$n" --jsonl >"$work/out$n" 2>"$work/vg$n"
done
echo "decided intervals: $(($(wc -l <"$work/out1000") - 1)) of 1000"
# Without the walk (scripts/callgrind_walk.py), and beside the real cpuplugd.
python3 scripts/callgrind_walk.py "$work/cg500" "$work/cg1000" 500 | tee "$work/per"
per=$(sed -n 's/^instructions per interval: //p' "$work/per" | tr -d ,)
# The real cpuplugd's, measured the same way: 49,710 was 0.22x of it.
cpuplugd=225955
awk -v p="$per" -v c="$cpuplugd" 'BEGIN {
  printf "%.3fx the real cpuplugd (%d per interval); target <= 0.10x\n", p / c, c }'

#!/usr/bin/env bash
# Instructions per interval of `plugtop eval --jsonl` over a long snapshot
# series, as (I(1000) - I(500)) / 500 so start-up cost cancels out.
#
# usage: scripts/callgrind-eval.sh [RULE_FILE] [CASE_SNAPSHOTS]
# needs: valgrind, python3, ../shared/tools/longseries.py
set -euo pipefail
cd "$(dirname "$0")/.."
rules=${1:-examples/rules/recommended-default.conf}
src=${2:-../shared/conformance/cases/seed-recommended-oldkernel/snapshots}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet
for n in 500 1000; do
  python3 ../shared/tools/longseries.py "$src" "$work/s$n" "$n"
  valgrind --tool=callgrind --callgrind-out-file="$work/cg$n" \
    target/release/plugtop eval -c "$rules" --snapshots "$work/s$n" --jsonl >"$work/out$n" 2>"$work/vg$n"
done
ir() { grep -E '^(summary|totals):' "$1" | head -1 | awk '{print $2}'; }
i500=$(ir "$work/cg500"); i1000=$(ir "$work/cg1000")
echo "decided intervals: $(($(wc -l <"$work/out1000") - 1)) of 1000"
echo "I(500)=$i500 I(1000)=$i1000"
per=$(( (i1000 - i500) / 500 ))
echo "instructions per interval: $per"
# The real cpuplugd's, measured the same way: 49,710 was 0.22x of it.
cpuplugd=225955
python3 -c "print(f'{$per / $cpuplugd:.3f}x the real cpuplugd ({$cpuplugd:,} per interval); target <= 0.10x')"

#!/usr/bin/env bash
# Instructions per interval of `plugtop eval --jsonl` over a long snapshot
# series, as (I(1000) - I(500)) / 500 so start-up cost cancels out.
#
# valgrind has no openat2 (it says ENOSYS), so under it every file of a
# snapshot is opened by fs::walk's fallback walk, component by
# component: code that never runs on the kernels plugtop supports with
# openat2, where one system call resolves the path. The figure printed
# and held to the target is without that walk: its inclusive cost (the
# `walk_open` function, never inlined for this) is subtracted, and what
# the one openat2 call costs instead (its wrapper, measured in the same
# profile) is added back per walk. Both figures are printed.
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
echo "decided intervals: $(($(wc -l <"$work/out1000") - 1)) of 1000"
# Per profile: the total, the walk's inclusive cost and calls, and the
# cost of one openat2 attempt (in_one_call, inclusive, per call).
python3 - "$work/cg500" "$work/cg1000" <<'PY'
import re, sys

def profile(path):
    """The total, and per callee of interest its inclusive cost and calls
    from callers outside it (callgrind's `cfn=` / `calls=` / cost lines)."""
    names, fn, callee, calls, total = {}, "", None, 0, 0
    seen = {"walk_open": [0, 0], "in_one_call": [0, 0]}
    for line in open(path):
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
        if m:
            kind, ident, name = m.groups()
            if name:
                names[ident] = name.strip()
            if kind == "fn":
                fn = names.get(ident, "")
            else:
                callee = names.get(ident, "")
            continue
        if line.startswith("calls="):
            calls = int(line.split()[0][len("calls="):])
            continue
        m = re.match(r"(?:summary|totals): (\d+)", line)
        if m:
            total = int(m.group(1))
            continue
        if callee is not None and calls and re.match(r"[-+*0-9]", line):
            for key, tally in seen.items():
                target = "fs::walk::" + key
                if callee.endswith(target) and not fn.endswith(target):
                    tally[0] += int(line.split()[1])
                    tally[1] += calls
            callee, calls = None, 0
    return total, seen

(t5, s5), (t10, s10) = profile(sys.argv[1]), profile(sys.argv[2])
walk = (s10["walk_open"][0] - s5["walk_open"][0]) / 500
walks = (s10["walk_open"][1] - s5["walk_open"][1]) / 500
tried = s5["in_one_call"][1] + s10["in_one_call"][1]
one = (s5["in_one_call"][0] + s10["in_one_call"][0]) / max(1, tried)
with_walk = (t10 - t5) / 500
per = with_walk - walk + walks * one
print(f"I(500)={t5} I(1000)={t10}")
print(f"with valgrind's fallback walk: {with_walk:,.0f} instructions per interval")
print(f"  of which the walk: {walk:,.0f} ({walks:.1f} walks per interval); the openat2 call"
      f" each replaces costs {one:.0f}, added back")
print(f"instructions per interval: {per:,.0f}")
# The real cpuplugd's, measured the same way: 49,710 was 0.22x of it.
cpuplugd = 225955
print(f"{per / cpuplugd:.3f}x the real cpuplugd ({cpuplugd:,} per interval); target <= 0.10x")
PY

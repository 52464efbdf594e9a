#!/usr/bin/env python3
"""Instructions per interval from two callgrind profiles of one program, a
short run and a long one: (I(long) - I(short)) / intervals between them, so
start-up and shutdown cancel out.

valgrind 3.19 has no openat2 (it says ENOSYS), so under it plugtop opens
every file by kernel::fs::walk's fallback walk, component by component:
code that never runs on the kernels plugtop supports, where one openat2
call resolves the path. The figure returned is without that walk: its
inclusive cost (`walk_open`, never inlined for this) is subtracted, and
what the one openat2 call costs instead (its wrapper `in_one_call`,
measured in the same profiles) is added back per walk. A program without
those functions (cpuplugd, the C floor) is counted as it is.

Used by scripts/callgrind-eval.sh and scripts/cost.sh.
usage: callgrind_walk.py SHORT_PROFILE LONG_PROFILE INTERVALS
"""
import re
import sys

WATCHED = ("walk_open", "in_one_call")


def profile(path):
    """The total, and per watched function its inclusive cost and calls
    from callers outside it (callgrind's `cfn=` / `calls=` / cost lines)."""
    names, fn, callee, calls, total = {}, "", None, 0, 0
    seen = {key: [0, 0] for key in WATCHED}
    with open(path) as f:
        for line in f:
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


def per_interval(short, long, intervals):
    """From two profiles' paths and the intervals between them: a dict of
    the totals, the figure with the walk, the walk's share, walks per
    interval, one openat2 call's cost and the figure without the walk."""
    (t1, s1), (t2, s2) = profile(short), profile(long)
    n = max(1, intervals)
    walk = (s2["walk_open"][0] - s1["walk_open"][0]) / n
    walks = (s2["walk_open"][1] - s1["walk_open"][1]) / n
    tried = s1["in_one_call"][1] + s2["in_one_call"][1]
    one = (s1["in_one_call"][0] + s2["in_one_call"][0]) / max(1, tried)
    with_walk = (t2 - t1) / n
    return {
        "short": t1,
        "long": t2,
        "with_walk": with_walk,
        "walk": walk,
        "walks": walks,
        "one": one,
        "per": with_walk - walk + walks * one,
    }


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    r = per_interval(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    print(f"I(short)={r['short']} I(long)={r['long']}")
    print(f"with valgrind's fallback walk: {r['with_walk']:,.0f} instructions per interval")
    print(f"  of which the walk: {r['walk']:,.0f} ({r['walks']:.1f} walks per interval);"
          f" the openat2 call each replaces costs {r['one']:.0f}, added back")
    print(f"instructions per interval: {r['per']:,.0f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Judges what scripts/s390x/guest-run.sh collected in the guest (the
directory target/s390x-guest/out): the listed tests' results, and per
scenario cpuplugd's and `plugtop run`'s CPU changes, pool changes and the
states after the signal and the restore. Prints both timelines and a
verdict; exits 1 on a difference or a failed test.

usage: verdict.py OUT_DIR JOB...
"""

import pathlib
import re
import sys

SCENARIOS = {
    "term": "all online, pool 0; SIGTERM",
    "kill": "all online, pool 0; SIGKILL, then `plugtop restore` for plugtop",
    "partial": "cpu2 and cpu3 offline, pool 256; SIGTERM",
}
DAEMONS = ("cpuplugd", "plugtop")
POOL = re.compile(r"changing number of pages permanently reserved to (\d+)")
CPU = {
    "cpuplugd": re.compile(r"cpu(\d+) will be (enabled|disabled)"),
    "plugtop": re.compile(r"\b(plugged|unplugged) cpu(\d+)\b"),
}


def read(out, name, default=""):
    path = out / name
    return path.read_text(errors="replace").strip() if path.exists() else default


def actions(out, name, daemon):
    """The CPU changes and the pool values the daemon logged before its signal."""
    lines = read(out, f"{name}.log").splitlines()
    cut = int(read(out, f"{name}.cut", "0") or 0)
    cpus, pool = [], []
    for line in lines[:cut]:
        m = CPU[daemon].search(line)
        if m and daemon == "cpuplugd":
            cpus.append(("plug" if m.group(2) == "enabled" else "unplug") + f" cpu{m.group(1)}")
        elif m:
            cpus.append(("plug" if m.group(1) == "plugged" else "unplug") + f" cpu{m.group(2)}")
        m = POOL.search(line)
        if m:
            pool.append(int(m.group(1)))
    return cpus, pool


def counted(state):
    """A state as cpuplugd restores it: the number of online CPUs and the pool."""
    fields = dict(f.split("=", 1) for f in state.split())
    cpus = [c for c in fields.get("online", "").split(",") if c]
    return f"{len(cpus)} online, pool={fields.get('pool', '?')}"


def timeline(out, name):
    t0 = float(read(out, f"{name}.t0", "0") or 0)
    rows = []
    for line in read(out, f"{name}.timeline").splitlines():
        t, _, state = line.partition(" ")
        rows.append(f"{float(t) - t0:6.1f} s  {state}")
    return rows


def tests(out):
    ok = True
    logs = sorted(out.glob("tests.*.log"))
    if not logs:
        print("tests: none ran in the guest")
        return False
    for log in logs:
        kind = log.name[len("tests.") : -len(".log")]
        text = log.read_text(errors="replace")
        result = [l for l in text.splitlines() if l.startswith("test result")]
        code = read(out, f"tests.{kind}.exit", "?")
        print(f"tests {kind} (in the guest): {result[-1] if result else 'no result'}")
        if code != "0" or not result:
            ok = False
            for line in text.splitlines():
                if line.startswith("---- ") or line.endswith("FAILED"):
                    print("    " + line)
    return ok


def compare(out):
    ok = True
    for scenario, what in SCENARIOS.items():
        print(f"\n== {scenario}: {what}; load idle 12 s, busy 10 s, idle 16 s")
        seen = {}
        for d in DAEMONS:
            name = f"{scenario}.{d}"
            if not (out / f"{name}.log").exists():
                print(f"  {d}: did not run")
                ok = False
                continue
            cpus, pool = actions(out, name, d)
            seen[d] = {
                "cpus": cpus,
                "pool": pool,
                "start": read(out, f"{name}.start"),
                "exit": read(out, f"{name}.exit"),
                "at-exit": read(out, f"{name}.at-exit"),
                "after": read(out, f"{name}.after"),
                "timeline": timeline(out, name),
            }
        if len(seen) < 2:
            continue
        a, b = seen["cpuplugd"], seen["plugtop"]
        width = max(len(r) for r in a["timeline"] + ["cpuplugd"]) + 2
        print(f"  {'cpuplugd (s from its start)':<{width}}plugtop run")
        for i in range(max(len(a["timeline"]), len(b["timeline"]))):
            left = a["timeline"][i] if i < len(a["timeline"]) else ""
            right = b["timeline"][i] if i < len(b["timeline"]) else ""
            print(f"  {left:<{width}}{right}")
        checks = [
            ("start state", a["start"], b["start"]),
            ("CPU changes", ", ".join(a["cpus"]), ", ".join(b["cpus"])),
            ("pool changes", " ".join(map(str, a["pool"])), " ".join(map(str, b["pool"]))),
            ("exit status", a["exit"], b["exit"]),
        ]
        if scenario == "kill":
            checks.append(("left by SIGKILL", a["at-exit"], b["at-exit"]))
            restored = b["after"]
            print(f"  plugtop restore: {read(out, 'kill.plugtop.restore.log').splitlines()[-1:] or ['?']}")
            checks.append(("plugtop restore gives back the start", b["start"], restored))
        else:
            if a["after"] != b["after"] and counted(a["after"]) == counted(b["after"]):
                # cpuplugd brings back the number of CPUs, taking them by
                # name; plugtop the same CPUs (README: a deliberate
                # difference).
                print(f"  state after the signal: differs only in which CPUs: cpuplugd {a['after']}, "
                      f"plugtop {b['after']} (cpuplugd restores the number of CPUs, plugtop the CPUs: documented)")
            else:
                checks.append(("state after the signal", a["after"], b["after"]))
            checks.append(("cpuplugd gives back the start (the number of CPUs and the pool)",
                           counted(a["start"]), counted(a["after"])))
            checks.append(("plugtop gives back the start (the same CPUs and the pool)", b["start"], b["after"]))
        for label, left, right in checks:
            same = left == right
            ok &= same
            mark = "same" if same else "DIFFERENT"
            if same:
                print(f"  {label}: {mark}: {left or '(none)'}")
            else:
                print(f"  {label}: {mark}:\n      cpuplugd/expected: {left or '(none)'}\n      plugtop:           {right or '(none)'}")
        # The load must have moved both groups, or nothing was compared.
        if scenario != "kill" and not (
            any(c.startswith("plug") for c in a["cpus"])
            and any(c.startswith("unplug") for c in a["cpus"])
            and a["pool"]
        ):
            print("  the load did not move both groups as planned: nothing to compare")
            ok = False
    return ok


def main():
    out = pathlib.Path(sys.argv[1])
    jobs = sys.argv[2:]
    ok = True
    if "tests" in jobs:
        ok &= tests(out)
    if "compare" in jobs:
        ok &= compare(out)
    print()
    if ok:
        print("s390x-guest: SAME: plugtop run and cpuplugd made the same CPU and pool changes and both gave the guest back"
              if "compare" in jobs else "s390x-guest: PASS")
        return 0
    print("s390x-guest: DIFFERENT or FAILED (see above; the guest's files are in " + str(out) + ")")
    return 1


if __name__ == "__main__":
    sys.exit(main())

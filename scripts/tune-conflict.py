#!/usr/bin/env python3
"""Shows why a tune recommends nothing better: reads the JSON of a
`plugtop tune ... --judge 100000 --format json` (every outcome that beat the
start or the reference judged) and lists, of the candidates that meet GOAL,
what each loses on. Exits 1 when the judge recommended something after all
(the default judging then missed it: a defect) or a candidate meets the goal
without a verdict against it.

    scripts/tune-conflict.py steady-at-no-more-cpus OUT.json
    scripts/tune-conflict.py smaller-guest OUT.json

Used by scripts/tune-forms-acceptance.sh.
"""
import collections
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: scripts/tune-conflict.py steady-at-no-more-cpus|smaller-guest OUT.json")
    goal, path = sys.argv[1], sys.argv[2]
    try:
        with open(path) as f:
            v = json.load(f)
        start, reference, judged = v["start"], v["reference"], v["judged"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{path}: not the JSON of `plugtop tune --format json` ({e})")
    if goal == "steady-at-no-more-cpus":
        meets = lambda s: not s["flapping"] and s["avg_online_cpus"] <= start["avg_online_cpus"] + 1e-9
        words = f"stop the flapping at no more than the start's {start['avg_online_cpus']:.2f} CPUs"
    elif goal == "smaller-guest":
        meets = lambda s: s["guest_to_working_set"] < reference["guest_to_working_set"]
        words = f"make the guest smaller than the reference's {reference['guest_to_working_set']:.3f} × its working set"
    else:
        sys.exit(f"unknown goal {goal}")
    if not judged:
        print("  FAIL: nothing was judged (a tune with --only-workload, or nothing did better)")
        sys.exit(1)
    hits = [j for j in judged if meets(j["score"])]
    bad = any(j["verdict"].startswith("holds") for j in hits)
    print(f"  judged {len(judged)} outcomes (one of each that did better on the workload, at most --judge); "
          f"{len(hits)} {words}" + (", and some hold up:" if bad else ", and each loses elsewhere:"))
    where = collections.Counter(j["verdict"].split(":")[0] for j in hits)
    for w, n in where.most_common():
        print(f"    {n:4} {w}")
    # The dozen nearest the goal's edge: those that meet it by the least,
    # the likeliest to hold up elsewhere.
    if goal == "smaller-guest":
        hits.sort(key=lambda j: -j["score"]["guest_to_working_set"])
    for j in hits[:12]:
        s = j["score"]
        print(f"    {j.get('form') or 'the file itself'}: {s['unmet_cpu_seconds']:.1f} unmet CPU-s at "
              f"{s['avg_online_cpus']:.2f} CPUs, guest {s['guest_to_working_set']:.3f}: {j['verdict']}")
    if len(hits) > 12:
        print(f"    ... and {len(hits) - 12} more")
    if v.get("recommended") and v.get("standing") == "beats":
        print("  FAIL: judging every outcome found a recommendation the default judging missed")
        bad = True
    sys.exit(1 if bad else 0)


main()

#!/usr/bin/env bash
# Issue 26's acceptance, on a release build, with what it shows:
#
#  1. memory: memory-config-3.conf tuned against recommended-default.conf on
#     daytrader (the defaults, portfolio included) recommends a file that
#     beats it there and holds up on every built-in scenario and 40 steady
#     loads; `--threads 1` and `--threads 8` print the same bytes.
#  2. CPU: cpu-loadavg.conf tuned against cpu-real-load.conf on daytrader
#     recommends nothing (exit 1) and says which scenario the best loses on;
#     then a grid over the file's five numbers, run by `plugtop sim` on every
#     built-in scenario, shows that no setting both wins on daytrader and
#     stays within the acceptance's tolerance everywhere else: the `idle`
#     keyword does not count iowait, so whatever wins on daytrader keeps more
#     CPUs on database (2.80 against 2.59) for too little less unmet demand.
#
#   scripts/tune-robust.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
bin=target/release/plugtop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== memory: memory-config-3 against recommended-default on daytrader"
for t in 1 8; do
    /usr/bin/time -f "threads $t: %U s user CPU, %e s wall" \
        "$bin" tune examples/scenarios/daytrader.toml -c examples/rules/memory-config-3.conf \
        --against examples/rules/recommended-default.conf --old-kernel --objective memory \
        --threads "$t" --format json >"$work/mem-$t.json"
done
cmp "$work/mem-1.json" "$work/mem-8.json"
echo "threads 1 and 8: byte-identical"
python3 - "$work/mem-1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["recommended"], "nothing recommended"
assert d["standing"] == "beats", d["standing"]
rows = d["portfolio"]
steady = [r for r in rows if r.get("steady") is not None]
assert len(steady) == 40 and not any(r["recommended"]["flapping"] for r in steady)
for r in rows:
    if r.get("steady") is None:
        c, ref = r["recommended"], r["reference"]
        print(f"  {r['workload']:<15} guest {c['guest_to_working_set']:.2f} vs {ref['guest_to_working_set']:.2f}"
              f"  stalls {c['direct_scan_stalls']} vs {ref['direct_scan_stalls']}"
              f"  pool changes {c['pool_changes']} vs {ref['pool_changes']}")
s, r = d["recommended"]["score"], d["reference"]
print(f"  daytrader       guest {s['guest_to_working_set']:.2f} vs {r['guest_to_working_set']:.2f}, "
      f"throughput {s['throughput_ratio']:.3f} vs {r['throughput_ratio']:.3f}")
print("memory: holds")
PY

echo "== CPU: cpu-loadavg against cpu-real-load on daytrader"
set +e
"$bin" tune examples/scenarios/daytrader.toml -c examples/rules/cpu-loadavg.conf \
    --against examples/rules/cpu-real-load.conf --old-kernel >"$work/cpu.txt"
status=$?
set -e
tail -2 "$work/cpu.txt"
[ "$status" = 1 ] || { echo "expected exit 1 (nothing recommended), got $status"; exit 1; }

echo "== CPU: can any setting of cpu-loadavg.conf's numbers meet the acceptance?"
python3 - "$bin" "$work" <<'PY'
import itertools, json, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
bin, work = sys.argv[1], sys.argv[2]
scenarios = ["daytrader", "appserver", "combo", "database", "kernel-compile", "oscillating", "webserver"]
base = open("examples/rules/cpu-loadavg.conf").read()

def run(path, scenario):
    out = subprocess.run([bin, "sim", f"examples/scenarios/{scenario}.toml", "-c", path, "--old-kernel",
                          "--report", "--report-format", "json"], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    r = r.get("report", r)
    return r["unmet_cpu_seconds"], r["avg_online_cpus"], r["flapping"]

ref = {s: run("examples/rules/cpu-real-load.conf", s) for s in scenarios}

def loses(c, r):  # the acceptance's tolerance
    if c[0] > r[0] * 1.05 + 1: return "unmet"
    if c[1] > r[1] * 1.05 + 0.01 and not c[0] <= r[0] * 0.8 and not r[2]: return "CPUs"
    if c[2] and not r[2]: return "flaps"
    return None

def judge(p):
    update, plug_off, plug_idle, unplug_off, unplug_idle = p
    text = (base.replace('UPDATE="1"', f'UPDATE="{update}"')
                .replace("onumcpus + 0.75) & (idle < 10.0)", f"onumcpus + {plug_off}) & (idle < {plug_idle})")
                .replace("onumcpus - 0.25) | (idle > 50)", f"onumcpus - {unplug_off}) | (idle > {unplug_idle})"))
    path = f"{work}/{'_'.join(map(str, p))}.conf"
    open(path, "w").write(text)
    d = run(path, "daytrader")
    r = ref["daytrader"]
    if not (d[0] < r[0] * 0.99 - 0.1 and d[1] <= r[1] * 1.05 and not d[2]):
        return None
    for s in scenarios[1:]:
        why = loses(run(path, s), ref[s])
        if why:
            return f"{s}: {why}"
    return "HOLDS"

grid = [p for p in itertools.product([1, 2, 3], [-3.25, -1, 0, 0.5, 1], [1, 2, 5, 8, 12, 20],
                                      [3.75, 1, 0.5, 0], [101, 105, 110, 115, 120, 130, 150])
        if p[4] - p[2] >= 100]
with ThreadPoolExecutor(4) as pool:
    verdicts = list(pool.map(judge, grid))
winners = [v for v in verdicts if v]
tally = {}
for v in winners:
    tally[v] = tally.get(v, 0) + 1
print(f"  {len(grid)} settings with a CPU's hysteresis; {len(winners)} win on daytrader; after that:")
for v, n in sorted(tally.items(), key=lambda x: -x[1]):
    print(f"    {n:4} lose on {v}" if v != "HOLDS" else f"    {n:4} hold up")
if "HOLDS" in tally:
    sys.exit("a setting holds up: the tune should have found it")
print("CPU: no setting of the file's numbers meets the acceptance")
PY

#!/usr/bin/env bash
# Issue 26's acceptance, on a release build, with what it shows:
#
#  1. memory: memory-config-3.conf tuned against recommended-default.conf on
#     daytrader (the defaults, portfolio included) recommends nothing (exit
#     1), the same bytes at `--threads 1` and `--threads 8`; then a grid over
#     the file's three numbers shows that every setting that wins on daytrader
#     loses elsewhere: more stalls on database or kernel-compile, throughput
#     on combo, or stalls with the working set at 80% of memory.
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
    set +e
    /usr/bin/time -f "threads $t: %U s user CPU, %e s wall" \
        "$bin" tune examples/scenarios/daytrader.toml -c examples/rules/memory-config-3.conf \
        --against examples/rules/recommended-default.conf --old-kernel --objective memory \
        --threads "$t" --format json >"$work/mem-$t.json"
    status=$?
    set -e
    [ "$status" = 1 ] || { echo "expected exit 1 (nothing recommended), got $status"; exit 1; }
done
cmp "$work/mem-1.json" "$work/mem-8.json"
echo "threads 1 and 8: byte-identical"
python3 - "$work/mem-1.json" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
assert not d["recommended"], "a recommendation: update this script and docs/tune.md"
tally = collections.Counter(j["verdict"].split(":")[0] for j in d["judged"])
print(f"  {len(d['judged'])} judged, none held up:")
for why, n in tally.most_common():
    print(f"    {n:3} {why}")
PY

echo "== memory: can any setting of memory-config-3.conf's numbers meet the acceptance?"
python3 - "$bin" "$work" <<'PY'
import itertools, json, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
bin, work = sys.argv[1], sys.argv[2]
scenarios = ["daytrader", "appserver", "combo", "database", "kernel-compile", "oscillating", "webserver"]
# The tune's memory-pressure loads: a quarter of the 4 CPUs, the working
# set at 60, 80 and 95% of daytrader's memory, files read at 20 MiB/s.
for share in (60, 80, 95):
    open(f"{work}/p{share}.toml", "w").write(
        f'name = "p{share}"\ncpus = 4\nonline = 2\nmemory_mib = 5120\ncontention = 0.02\n'
        f'duration = "240s"\nseed = 1\n[[phases]]\nname = "steady"\nstart = "0:00"\nthreads = 1.0\n'
        f'cpu_per_thread = 1.0\nsystem_share = 0.1\nio_mib_per_s = 20\n'
        f'working_set_mib = {5120 * share // 100}\n')
    scenarios.append(f"p{share}")
base = open("examples/rules/memory-config-3.conf").read()

def run(path, scenario):
    where = f"{work}/{scenario}.toml" if scenario.startswith("p") else f"examples/scenarios/{scenario}.toml"
    out = subprocess.run([bin, "sim", where, "-c", path, "--old-kernel", "--report", "--report-format", "json"],
                         capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    return r.get("report", r)

ref = {s: run("examples/rules/recommended-default.conf", s) for s in scenarios}

def loses(c, r):  # the tune's memory tolerance
    more = lambda x, y, floor: x > y * 1.05 + floor
    if more(c["unmet_cpu_seconds"], r["unmet_cpu_seconds"], 1): return "unmet"
    if c["flapping"] and not r["flapping"]: return "flaps"
    if more(c["guest_to_working_set"], r["guest_to_working_set"], 0.005): return "guest"
    if more(c["direct_scan_stalls"], r["direct_scan_stalls"], 2): return "stalls"
    if c["throughput_ratio"] < r["throughput_ratio"] - 0.005: return "throughput"
    if more(c["pool_changes"], r["pool_changes"], 5): return "pool changes"
    return None

def judge(p):
    plug, inc, dec = p
    text = (base.replace("pgscanrate > 20", f"pgscanrate > {plug}")
                .replace("MemFree / 40", f"MemFree / {inc}").replace("MemTotal / 40", f"MemTotal / {dec}"))
    path = f"{work}/m_{plug}_{inc}_{dec}.conf"
    open(path, "w").write(text)
    c, r = run(path, "daytrader"), ref["daytrader"]
    wins = (c["guest_to_working_set"] < r["guest_to_working_set"] * 0.99 - 0.001
            and c["throughput_ratio"] >= r["throughput_ratio"] - 0.002
            and c["direct_scan_stalls"] <= r["direct_scan_stalls"] and not c["flapping"])
    if not wins:
        return None
    for s in scenarios[1:]:
        why = loses(run(path, s), ref[s])
        if why:
            return f"{s}: {why}"
    return "HOLDS"

grid = list(itertools.product([20, 100, 200, 300, 500, 700, 1000, 1500, 2000],
                              [5, 7, 10, 15, 20, 30, 40, 60], [5, 8, 11, 15, 20, 30, 40, 80]))
with ThreadPoolExecutor(4) as pool:
    verdicts = list(pool.map(judge, grid))
winners = [v for v in verdicts if v]
tally = {}
for v in winners:
    tally[v] = tally.get(v, 0) + 1
print(f"  {len(grid)} settings; {len(winners)} win on daytrader; after that:")
for v, n in sorted(tally.items(), key=lambda x: -x[1]):
    print(f"    {n:4} lose on {v}" if v != "HOLDS" else f"    {n:4} hold up")
if "HOLDS" in tally:
    sys.exit("a setting holds up: the tune should have found it")
print("memory: no setting of the file's numbers meets the acceptance")
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

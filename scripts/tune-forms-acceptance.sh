#!/usr/bin/env bash
# Issue 40's acceptance for `plugtop tune` with rule forms, on a release
# build (the debug build of `cargo test` covers the same paths on short
# scenarios; these are the full-size runs):
#
#   1. cpu-loadavg.conf against cpu-real-load.conf on daytrader: a file is
#      written, `plugtop check` passes it without a warning, it wins on
#      daytrader, beats or ties the reference on every built-in scenario
#      (unmet CPU-s within +5%, average CPUs within +5% unless it leaves at
#      least 20% less unmet) and flaps at none of the 40 steady loads.
#   2. The same for the memory objective: memory-config-3.conf against
#      recommended-default.conf (guest/working set, stalls, throughput,
#      pool changes, on every built-in scenario).
#   3. --threads 1 and --threads 8: the same bytes, the same file.
#   4. recommended-default.conf on the oscillating scenario: a file that
#      stops the flapping at no more average CPUs than the start.
#   5. recommended-default.conf on each built-in scenario: no
#      recommendation worse than the start on any held-out row.
#   6. What each costs: /usr/bin/time for the default tune and for
#      --only-thresholds.
#
#   scripts/tune-forms-acceptance.sh [PLUGTOP]   (default: builds target/release/plugtop)
#
# About 5 minutes on 2 cores. Exits non-zero on the first point that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --release --locked >&2
  bin=target/release/plugtop
fi
seed=../shared/seed-rules
[ -d "$seed" ] || { echo "needs ../shared/seed-rules beside the repository" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
timed() { # LABEL ARGS... : runs plugtop, prints user+sys CPU-s and peak RSS
  local label=$1; shift
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$bin" "$@" > "$work/out" 2> "$work/err" || true
  tail -n 1 "$work/time" | awk -v label="$label" '{ printf "%-44s %6.1f CPU-s  %6.1f MiB\n", label, $1 + $2, $3 / 1024 }'
}
check_json() { # OBJECTIVE : judges $work/out (JSON) by the acceptance's terms
  python3 - "$1" "$work/out" <<'PY'
import json, sys
objective, path = sys.argv[1], sys.argv[2]
v = json.load(open(path))
rec = v.get("recommended")
if not rec:
    print("  FAIL: nothing recommended"); sys.exit(1)
bad = []
s, r = rec["score"], v["reference"]
if objective == "cpu":
    if not (s["unmet_cpu_seconds"] < r["unmet_cpu_seconds"] or
            s["avg_online_cpus"] < r["avg_online_cpus"] - 0.01):
        bad.append("does not win on the workload")
else:
    if not s["guest_to_working_set"] < r["guest_to_working_set"]:
        bad.append("does not win on the workload")
for row in v["portfolio"]:
    c, ref, w = row["recommended"], row["reference"], row["workload"]
    if row.get("steady") is not None:
        if c["flapping"]:
            bad.append(f"flaps at {w}")
        continue
    if row.get("pressure") is not None:
        continue
    much_less = c["unmet_cpu_seconds"] <= ref["unmet_cpu_seconds"] * 0.8
    if c["unmet_cpu_seconds"] > ref["unmet_cpu_seconds"] * 1.05 + 0.5:
        bad.append(f"{w}: unmet {c['unmet_cpu_seconds']:.1f} against {ref['unmet_cpu_seconds']:.1f}")
    if c["avg_online_cpus"] > ref["avg_online_cpus"] * 1.05 + 0.01 and not much_less:
        bad.append(f"{w}: CPUs {c['avg_online_cpus']:.2f} against {ref['avg_online_cpus']:.2f}")
    if objective == "memory":
        if c["guest_to_working_set"] > ref["guest_to_working_set"] * 1.05 + 0.005:
            bad.append(f"{w}: guest {c['guest_to_working_set']:.2f} against {ref['guest_to_working_set']:.2f}")
        if c["direct_scan_stalls"] > ref["direct_scan_stalls"] * 1.05 + 2:
            bad.append(f"{w}: stalls {c['direct_scan_stalls']} against {ref['direct_scan_stalls']}")
        if c["throughput_ratio"] < ref["throughput_ratio"] - 0.005:
            bad.append(f"{w}: throughput {c['throughput_ratio']:.3f} against {ref['throughput_ratio']:.3f}")
steady = [r for r in v["portfolio"] if r.get("steady") is not None]
form = v.get("recommended_form") or {}
print(f"  recommended: {form.get('name', 'the file itself')} {form.get('choices', '')}")
print(f"  workload: {s['unmet_cpu_seconds']:.1f} unmet CPU-s at {s['avg_online_cpus']:.2f} CPUs, guest {s['guest_to_working_set']:.2f}; "
      f"reference {r['unmet_cpu_seconds']:.1f} at {r['avg_online_cpus']:.2f}, guest {r['guest_to_working_set']:.2f}")
print(f"  built-in scenarios: {len(v['portfolio']) - len(steady)}, steady loads: {len(steady)}")
for b in bad:
    print("  FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

echo "== 1. cpu-loadavg against cpu-real-load on daytrader (--old-kernel)"
day=(tune examples/scenarios/daytrader.toml -c "$seed/cpu-loadavg.conf" --against "$seed/cpu-real-load.conf" --old-kernel)
timed "default tune (forms)" "${day[@]}" --format json --threads 1
cp "$work/out" "$work/one.json"
check_json cpu || fail=1
"$bin" "${day[@]}" --threads 1 --write "$work/one.conf" > "$work/one.txt" 2>/dev/null || fail=1
"$bin" check "$work/one.conf" --root tests/fixtures/roots/newkernel > "$work/check" 2>&1 || true
if grep -q "0 errors, 0 warnings" "$work/check"; then echo "  plugtop check: 0 errors, 0 warnings"; else echo "  FAIL: check says"; cat "$work/check"; fail=1; fi
grep -E "^(Form changed|Cost against)" "$work/one.txt" | sed 's/^/  /'

echo "== 3. --threads 1 and --threads 8"
"$bin" "${day[@]}" --format json --threads 8 > "$work/eight.json" 2>/dev/null || true
"$bin" "${day[@]}" --threads 8 --write "$work/eight.conf" > "$work/eight.txt" 2>/dev/null || true
if cmp -s "$work/one.json" "$work/eight.json" && cmp -s "$work/one.conf" "$work/eight.conf" && cmp -s "$work/one.txt" "$work/eight.txt"; then
  echo "  the same bytes (JSON, text and the written file)"
else echo "  FAIL: --threads 8 differs"; fail=1; fi

echo "== 2. memory-config-3 against recommended-default on daytrader (--objective memory)"
timed "default memory tune (forms)" tune examples/scenarios/daytrader.toml -c "$seed/memory-config-3.conf" \
  --against "$seed/recommended-default.conf" --objective memory --old-kernel --format json
check_json memory || fail=1

echo "== 4. recommended-default on oscillating"
timed "default tune (forms)" tune examples/scenarios/oscillating.toml -c "$seed/recommended-default.conf" --old-kernel --format json
python3 - "$work/out" <<'PY' || fail=1
import json, sys
v = json.load(open(sys.argv[1]))
rec, start = v.get("recommended"), v["start"]
if not rec:
    print("  FAIL: nothing recommended"); sys.exit(1)
s = rec["score"]
print(f"  start {start['avg_online_cpus']:.2f} CPUs, flapping {start['flapping']}; recommended {s['avg_online_cpus']:.2f} CPUs, flapping {s['flapping']}, {s['cpu_changes']} CPU changes")
sys.exit(0 if (not s["flapping"] and s["avg_online_cpus"] <= start["avg_online_cpus"] + 1e-9) else 1)
PY
timed "--objective steady" tune examples/scenarios/oscillating.toml -c "$seed/recommended-default.conf" --old-kernel --objective steady --format json

echo "== 5. recommended-default on each built-in scenario: never worse than the start where it was not tuned"
for sc in examples/scenarios/*.toml; do
  name=$(basename "$sc" .toml)
  [ "$name" = big-lpar ] && continue
  "$bin" tune "$sc" -c "$seed/recommended-default.conf" --old-kernel --format json > "$work/sc.json" 2>/dev/null || true
  python3 - "$name" "$work/sc.json" <<'PY' || fail=1
import json, sys
name, path = sys.argv[1], sys.argv[2]
try:
    v = json.load(open(path))
except ValueError:
    print(f"  {name}: no output"); sys.exit(1)
if not v.get("recommended"):
    print(f"  {name}: nothing recommended (nothing to be worse)"); sys.exit(0)
rows = {}
for h in v["held_out"]:
    rows.setdefault(h["workload"], {})[h["file"]] = h["score"]
worse = []
for w, r in rows.items():
    s, c = r.get("start"), r.get("recommended")
    if not s or not c:
        continue
    if (c["unmet_cpu_seconds"] > s["unmet_cpu_seconds"] * 1.05 + 0.5 and
            c["avg_online_cpus"] >= s["avg_online_cpus"] - 0.01) or (c["flapping"] and not s["flapping"]):
        worse.append(w)
form = (v.get("recommended_form") or {}).get("name", "its own form")
print(f"  {name}: {form}; worse than the start on {len(worse)} of {len(rows)} held-out rows {worse if worse else ''}")
sys.exit(1 if worse else 0)
PY
done

echo "== 6. cost"
timed "daytrader, default (forms)" "${day[@]}" --format json
timed "daytrader, --only-thresholds" "${day[@]}" --only-thresholds --format json
[ "$fail" = 0 ] && echo "PASS" || echo "FAIL"
exit "$fail"

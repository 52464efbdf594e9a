#!/usr/bin/env bash
# The recording-to-workload round trip of docs/tune.md: each scenario is run
# with RULES and recorded (`plugtop sim --record`), the recording is turned
# back into a workload (`plugtop tune --replay --whole --budget 1`), and the
# two reports are printed side by side (original → replayed).
#
# Fails (exit 1) when a row's unmet CPU-s or average CPUs moved by more than
# 10% (values near zero: by more than 1 CPU-s of unmet demand, or 0.05 of a
# CPU on average, whichever is more); such rows are marked OUTSIDE.
#
# usage: scripts/roundtrip.sh [RULES [SCENARIO...]]
#   RULES: default both CPU rule files, examples/rules/cpu-loadavg.conf and
#   examples/rules/cpu-real-load.conf; SCENARIO: a name under
#   examples/scenarios (default: every one there).
# needs: python3
set -euo pipefail
cd "$(dirname "$0")/.."
rules=("${1:-}")
shift || true
if [ -z "${rules[0]}" ]; then
    rules=(examples/rules/cpu-loadavg.conf examples/rules/cpu-real-load.conf)
fi
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
    for f in examples/scenarios/*.toml; do
        scenarios+=("$(basename "$f" .toml)")
    done
fi
cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
outside=0
run=0
for r in "${rules[@]}"; do
    mkdir "$tmp/$((++run))"
    out=$tmp/$run
    echo
    echo "$r:"
    echo
    echo "| scenario | unmet CPU-s | avg CPUs | guest / WS | stalls | throughput | censored intervals | within 10% |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    for s in "${scenarios[@]}"; do
        target/release/plugtop sim "examples/scenarios/$s.toml" -c "$r" --fast \
            --record "$out/$s.rec" --report --report-format json > "$out/$s.orig.json"
        target/release/plugtop tune --replay "$out/$s.rec" --whole -c "$r" --budget 1 \
            --format json > "$out/$s.tune.json" 2> "$out/$s.err" || true
        censored=$(sed -n 's/.*busy in \([0-9]*\).*raised \([0-9]*\).*/\1, \2 raised/p' "$out/$s.err" | head -1)
        python3 - "$s" "$out/$s.orig.json" "$out/$s.tune.json" "${censored:-?}" <<'EOF' || outside=1
import json, sys
name, a, censored = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[4]
try:
    b = json.load(open(sys.argv[3]))["start"]
except (ValueError, KeyError):
    print(f"| {name} | no replay | | | | | {censored} | OUTSIDE |")
    sys.exit(1)
def pair(key, fmt):
    return f"{fmt.format(a[key])} → {fmt.format(b[key])}"
def close(key, floor):
    return abs(b[key] - a[key]) <= max(0.10 * abs(a[key]), floor)
ok = close("unmet_cpu_seconds", 1.0) and close("avg_online_cpus", 0.05)
print(f"| {name} | {pair('unmet_cpu_seconds', '{:.1f}')} | {pair('avg_online_cpus', '{:.2f}')} "
      f"| {pair('guest_to_working_set', '{:.2f}')} | {pair('direct_scan_stalls', '{:.0f}')} "
      f"| {a['throughput_ratio']*100:.1f}% → {b['throughput_ratio']*100:.1f}% | {censored} "
      f"| {'yes' if ok else 'OUTSIDE'} |")
sys.exit(0 if ok else 1)
EOF
    done
done
exit $outside

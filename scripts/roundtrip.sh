#!/usr/bin/env bash
# The recording-to-workload round trip of docs/tune.md: each scenario is run
# with RULES and recorded (`plugtop sim --record`), the recording is turned
# back into a workload (`plugtop tune --replay --whole --budget 1`), and the
# two reports are printed side by side (original → replayed).
# usage: scripts/roundtrip.sh [RULES] [SCENARIO...]
# needs: python3
set -euo pipefail
cd "$(dirname "$0")/.."
rules=${1:-examples/rules/recommended-modern.conf}
shift || true
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
    scenarios=(daytrader appserver webserver combo database)
fi
cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| scenario | unmet CPU-s | avg CPUs | guest / WS | stalls | throughput | censored intervals |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for s in "${scenarios[@]}"; do
    target/release/plugtop sim "examples/scenarios/$s.toml" -c "$rules" --fast \
        --record "$tmp/$s.rec" --report --report-format json > "$tmp/$s.orig.json"
    target/release/plugtop tune --replay "$tmp/$s.rec" --whole -c "$rules" --budget 1 \
        --format json > "$tmp/$s.tune.json" 2> "$tmp/$s.err" || true
    censored=$(sed -n 's/.*busy in \([0-9]*\).*raised \([0-9]*\).*/\1, \2 raised/p' "$tmp/$s.err" | head -1)
    python3 - "$s" "$tmp/$s.orig.json" "$tmp/$s.tune.json" "${censored:-?}" <<'EOF'
import json, sys
name, a, b, censored = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))["start"], sys.argv[4]
def pair(key, fmt):
    return f"{fmt.format(a[key])} → {fmt.format(b[key])}"
print(f"| {name} | {pair('unmet_cpu_seconds', '{:.1f}')} | {pair('avg_online_cpus', '{:.2f}')} "
      f"| {pair('guest_to_working_set', '{:.2f}')} | {pair('direct_scan_stalls', '{:.0f}')} "
      f"| {a['throughput_ratio']*100:.1f}% → {b['throughput_ratio']*100:.1f}% | {censored} |")
EOF
done

#!/usr/bin/env bash
# Wall time and peak RSS of `plugtop tune` on the 12.5-minute daytrader
# scenario with a budget of 500 candidates (target < 10 s on 2 cores).
# Then a 24-hour recording (made with plugtop sim --record) as the workload
# with 200 candidates (target < 60 s).
# usage: scripts/tune-speed.sh [BUDGET]
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-500}
cargo build --release --quiet
for rules in cpu-loadavg cpu-real-load; do
    /usr/bin/time -f "$rules: %e s wall, %U s user, %M KB peak RSS" \
        target/release/plugtop tune examples/scenarios/daytrader.toml \
        -c "examples/rules/$rules.conf" --old-kernel --budget "$budget" > /dev/null || true  # exit 1: nothing beat the start
done
# A 24-hour recording as the workload, 200 candidates (target < 60 s).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/release/plugtop sim examples/scenarios/combo.toml -c examples/rules/recommended-modern.conf \
    --fast --duration 24h --record "$tmp/day.rec" --report > /dev/null
/usr/bin/time -f "24-hour recording, 200 candidates: %e s wall, %U s user, %M KB peak RSS" \
    target/release/plugtop tune --replay "$tmp/day.rec" -c examples/rules/recommended-modern.conf \
    --budget 200 > /dev/null 2> "$tmp/err" || true
tail -1 "$tmp/err"

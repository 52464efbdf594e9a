#!/usr/bin/env bash
# Wall time and peak RSS of `plugtop tune` on the 12.5-minute daytrader
# scenario with a budget of 500 candidates (target < 10 s on 2 cores).
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

#!/usr/bin/env bash
# Wall time and peak memory of headless simulated runs with --fast: the
# 12.5-minute daytrader scenario, and the same guest for 24 simulated hours
# (the model's state must not grow with the run's length).
#
# usage: scripts/sim-speed.sh   (needs /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
for duration in "" 24:00:00; do
    args=(sim examples/scenarios/daytrader.toml -c examples/rules/recommended-modern.conf --fast --report)
    [[ -n $duration ]] && args+=(--duration "$duration")
    /usr/bin/time -f "%e s wall, %M KiB max RSS" target/release/plugtop "${args[@]}" 2>&1 \
        | grep -E "intervals|simulated time|wall" | paste -sd' ' | tr -s ' '
done

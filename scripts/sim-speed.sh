#!/usr/bin/env bash
# Wall time and peak memory of headless simulated runs with --fast: the
# 12.5-minute daytrader scenario, and the same guest for 24 simulated hours
# (the model's state must not grow with the run's length); and one simulated
# hour served as a root (`--serve`: every second's files written beneath the
# directory and renamed into place), whose system time is the publishing's.
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
served=$(mktemp -d)
trap 'rm -rf "$served"' EXIT
/usr/bin/time -f "served 1 h: %e s wall, %S s system, %M KiB max RSS" target/release/plugtop \
    sim examples/scenarios/daytrader.toml --serve "$served/root" --fast --duration 1:00:00 2>&1 \
    | grep -E "wall"

#!/usr/bin/env bash
# Wall time of `plugtop whatif` over a 24-hour recording (86,400 one-second
# intervals) of the simulated daytrader guest under the recommended rules:
# once against the recorded actions, once against a second rule file.
#
# usage: scripts/whatif-speed.sh   (needs /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
target/release/plugtop sim examples/scenarios/daytrader.toml -c examples/rules/recommended-modern.conf \
    --fast --report --duration 24:00:00 --record "$dir/day.rec" >/dev/null
echo "recording: $(stat -c %s "$dir/day.rec") bytes"
for against in "" examples/rules/memory-config-10.conf; do
    args=(whatif --replay "$dir/day.rec" -c examples/rules/recommended-modern.conf)
    [[ -n $against ]] && args+=(--against "$against")
    /usr/bin/time -f "whatif ${against:-against the recording}: %e s wall, %M KiB max RSS" \
        target/release/plugtop "${args[@]}" >/dev/null
done

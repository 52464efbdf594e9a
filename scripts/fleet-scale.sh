#!/usr/bin/env bash
# `plugtop fleet` at scale: Prometheus (the distribution's, on loopback)
# backfilled with `promtool tsdb create-blocks-from openmetrics` with
# GUESTS plugtop guests over HOURS hours (a sample every STEP seconds; the
# families `plugtop fleet` asks for, from scripts/fleet-scale-data.py),
# then scripts/fleet-scale.py measures the batch run, the first screen,
# each refresh and plugtop's peak RSS. Render time: `cargo bench --bench
# fleet_render`.
# usage: scripts/fleet-scale.sh [GUESTS [HOURS [STEP]]]   (default 1000 24 300)
set -euo pipefail
cd "$(dirname "$0")/.."
guests=${1:-1000}
hours=${2:-24}
step=${3:-300}
scripts/install-prometheus.sh
cargo build --release --quiet
bin=$PWD/target/release/plugtop
tmp=$(mktemp -d)
prom=
cleanup() {
    [ -n "$prom" ] && kill "$prom" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
end=$(date +%s)
echo "== $guests guests × ${hours} h, a sample every ${step} s, ending now"
python3 scripts/fleet-scale-data.py "$guests" "$hours" "$step" "$end" >"$tmp/fleet.om"
ls -l "$tmp/fleet.om" | awk '{print "openmetrics: " $5 " bytes"}'
grep -vc '^#' "$tmp/fleet.om" | awk '{print "samples: " $1}'
time promtool tsdb create-blocks-from openmetrics "$tmp/fleet.om" "$tmp/data" >"$tmp/backfill.log"
rm "$tmp/fleet.om"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$tmp/prometheus.yml"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --storage.tsdb.retention.time=30d --web.listen-address="127.0.0.1:$port" \
    >"$tmp/prometheus.log" 2>&1 &
prom=$!
for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1 && break
    sleep 0.2
done
curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null || { echo "Prometheus not ready"; tail "$tmp/prometheus.log"; exit 1; }
echo "== series in Prometheus: $(curl -sf --get "http://127.0.0.1:$port/api/v1/query" \
    --data-urlencode 'query=count({__name__=~"plugtop_.+"})' | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')"
python3 scripts/fleet-scale.py "$bin" "http://127.0.0.1:$port" "$guests"

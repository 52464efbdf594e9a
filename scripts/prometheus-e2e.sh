#!/usr/bin/env bash
# End to end with the real servers, on loopback only: the distribution's
# Prometheus and node exporter (installed by scripts/install-prometheus.sh
# when missing) scrape `plugtop run` driving a simulated oscillating guest,
# through both exposures (--metrics-listen and --metrics-textfile), and a
# second `plugtop run` (observe mode) that is killed, so a dead endpoint is
# seen too. Checks, each failing the script:
#   - promtool check rules and test rules (the alerts' unit tests) on the
#     shipped alerts, check metrics on both texts;
#   - the online-CPU series Prometheus stored follows the guest (it moves
#     between the counts the simulated guest had);
#   - the flapping alert fires (its `for:` shortened to 5s in the temporary
#     copy, so the test takes seconds, not minutes);
#   - the dead endpoint's PlugtopDown fires;
#   - every panel query of the Grafana dashboard is valid and returns data
#     (scripts/panel-check.py), the trouble and stale/down tables included.
# usage: scripts/prometheus-e2e.sh        (about a minute; needs root for the install)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prometheus.sh
node_exporter=$(command -v prometheus-node-exporter || command -v node_exporter)
cargo build --release --quiet
bin=$PWD/target/release/plugtop
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
p_plugtop=$(free_port); p_node=$(free_port); p_prom=$(free_port); p_dead=$(free_port)
fail() { echo "prometheus-e2e: FAIL: $*" >&2; exit 1; }

echo "== promtool check rules and test rules"
promtool check rules examples/prometheus/plugtop-alerts.yml
promtool test rules examples/prometheus/plugtop-alerts.test.yml

echo "== a simulated oscillating guest, and plugtop run on it"
"$bin" sim examples/scenarios/oscillating.toml --serve "$tmp/root" --speed 2 >"$tmp/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -e "$tmp/root/proc/sysinfo" ] && break; sleep 0.1; done
[ -e "$tmp/root/proc/sysinfo" ] || fail "the simulator published no root"
mkdir -p "$tmp/textfile"
"$bin" run -f --root "$tmp/root" -c examples/rules/oscillating-tight.conf \
    --metrics-listen "127.0.0.1:$p_plugtop" --metrics-textfile "$tmp/textfile/plugtop.prom" \
    >"$tmp/run.log" 2>&1 &
pids+=($!)
# Observe mode beside it (no lock taken), killed later: a dead endpoint.
"$bin" run -f --mode observe --root "$tmp/root" -c examples/rules/oscillating-tight.conf \
    --metrics-listen "127.0.0.1:$p_dead" >"$tmp/dead.log" 2>&1 &
dead_pid=$!
pids+=($dead_pid)

echo "== node exporter (textfile collector) and Prometheus, on loopback"
"$node_exporter" --web.listen-address="127.0.0.1:$p_node" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$tmp/textfile" >"$tmp/node.log" 2>&1 &
pids+=($!)
sed 's/for: .*/for: 5s/' examples/prometheus/plugtop-alerts.yml >"$tmp/alerts.yml"
cat >"$tmp/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [alerts.yml]
scrape_configs:
  - job_name: plugtop
    static_configs: [{targets: ["127.0.0.1:$p_plugtop", "127.0.0.1:$p_dead"]}]
  - job_name: node
    static_configs: [{targets: ["127.0.0.1:$p_node"]}]
CONF
promtool check config "$tmp/prometheus.yml" >/dev/null
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --web.listen-address="127.0.0.1:$p_prom" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)

query() {
    curl -sf --get "http://127.0.0.1:$p_prom/api/v1/query" --data-urlencode "query=$1"
}
# The first value of an instant query's result ("" when there is none).
scalar() {
    query "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
wait_for() { # wait_for SECONDS DESCRIPTION QUERY: until QUERY has a result
    local deadline=$((SECONDS + $1))
    until [ -n "$(scalar "$3" 2>/dev/null)" ]; do
        [ $SECONDS -lt $deadline ] || fail "$2 (query: $3)"
        sleep 1
    done
    echo "ok: $2"
}

echo "== promtool check metrics on both exposures"
wait_for 30 "plugtop's endpoint is scraped" 'up{job="plugtop"} == 1'
curl -sf "http://127.0.0.1:$p_plugtop/metrics" | promtool check metrics
curl -sf -H 'Accept: application/openmetrics-text;version=1.0.0' "http://127.0.0.1:$p_plugtop/metrics" | tail -1 | grep -qx '# EOF' \
    || fail "the endpoint did not answer OpenMetrics when asked"
promtool check metrics <"$tmp/textfile/plugtop.prom"
wait_for 30 "the textfile reaches Prometheus through node exporter" 'plugtop_cpus_online{job="node"}'

echo "== the series follow the guest"
wait_for 60 "the online CPUs moved (the guest oscillates)" 'changes(plugtop_cpus_online{job="plugtop"}[1m]) >= 2'
online_root=$(python3 - "$tmp/root" <<'PY'
import sys
text = open(sys.argv[1] + "/sys/devices/system/cpu/online").read().strip()
n = 0
for part in text.split(","):
    a, _, b = part.partition("-")
    n += int(b or a) - int(a) + 1
print(n)
PY
)
range=$(scalar "max_over_time(plugtop_cpus_online{job=\"plugtop\"}[30s]) - min_over_time(plugtop_cpus_online{job=\"plugtop\"}[30s])")
low=$(scalar "min_over_time(plugtop_cpus_online{job=\"plugtop\"}[30s])")
high=$(scalar "max_over_time(plugtop_cpus_online{job=\"plugtop\"}[30s])")
echo "guest online now: $online_root; Prometheus saw $low..$high in the last 30 s"
[ "$online_root" -ge "$low" ] && [ "$online_root" -le "$high" ] || fail "the guest's $online_root CPUs are outside what Prometheus saw ($low..$high)"
[ "${range%.*}" -ge 1 ] || fail "the series did not move"
applied=$(scalar 'sum(plugtop_applied_actions_total{job="plugtop"})')
plugged=$(grep -c 'plugged cpu' "$tmp/run.log" || true)
echo "applied actions per Prometheus: $applied; plug and unplug lines in plugtop's log: $plugged"
[ "${applied%.*}" -ge 1 ] || fail "no applied actions were counted"

echo "== the flapping alert fires"
wait_for 90 "PlugtopGuestFlapping fires" 'ALERTS{alertname="PlugtopGuestFlapping",alertstate="firing"}'

echo "== a killed plugtop: its endpoint is down and PlugtopDown fires"
wait_for 30 "the observing plugtop is scraped" "up{instance=\"127.0.0.1:$p_dead\"} == 1"
kill -KILL "$dead_pid"
wait_for 30 "the killed plugtop is down" "up{instance=\"127.0.0.1:$p_dead\"} == 0"
wait_for 60 "PlugtopDown fires" "ALERTS{alertname=\"PlugtopDown\",alertstate=\"firing\",instance=\"127.0.0.1:$p_dead\"}"

echo "== every dashboard panel returns data"
started=$(scalar 'min(process_start_time_seconds{job="plugtop"})')
range=$(python3 -c "import time; print(max(60, int(time.time() - float('$started')) + 1))")
python3 scripts/panel-check.py "http://127.0.0.1:$p_prom" examples/grafana/plugtop.json 1 "$range" \
    || fail "a dashboard panel is broken (see above)"
echo "prometheus-e2e: PASS"

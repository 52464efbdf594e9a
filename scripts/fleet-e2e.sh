#!/usr/bin/env bash
# `plugtop fleet` end to end against the distribution's Prometheus, on
# loopback only (installed by scripts/install-prometheus.sh when missing):
# 20 simulated guests (`plugtop sim --serve`, a mix of the example
# scenarios), each driven by its own `plugtop run --metrics-listen`, two of
# them on another rule file, one killed midway; Prometheus scrapes them all.
# Checks, each failing the script:
#   - `plugtop fleet --batch --format json` lists all 20, trouble first:
#     the killed one marked stopped, then the flapping guests (the
#     oscillating scenario under the recommended rules flaps) right after
#     it, before every guest without trouble; the two on the other rule file grouped as the
#     odd ones out; exit status 1 (guests in trouble);
#   - the text output says the same and names the drift;
#   - a pseudo-terminal drives the screen against the same Prometheus
#     (scripts/fleet-pty.py): the table, a filter, the drift view, a guest
#     in detail; Prometheus stopped (the header says DOWN within one
#     refresh) and started again (the header recovers); `q` exits 0.
#   (the common file is recommended-modern.conf: the seed paper's default
#   names the old kernel's vmstat fields, which the simulated guests lack)
# usage: scripts/fleet-e2e.sh     (about two minutes; root for the install)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prometheus.sh
cargo build --release --quiet
bin=$PWD/target/release/plugtop
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -f "$tmp/prom.pid" ] && kill "$(cat "$tmp/prom.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
fail() {
    echo "fleet-e2e: FAIL: $*" >&2
    for f in "$tmp"/run*.log; do
        grep -q "^plugtop .* started" "$f" && ! grep -qE "restored|terminated|exit" "$f" && continue
        echo "--- $f" >&2; tail -5 "$f" >&2
    done
    exit 1
}

N=20
scenarios=(oscillating daytrader webserver appserver database combo kernel-compile)
common=examples/rules/recommended-modern.conf
other=examples/rules/cpu-real-load.conf
drifted=(5 12)     # these run $other
killed=8           # this one's plugtop is killed midway
targets=()
ports=()
run_pids=()
echo "== $N simulated guests, each with plugtop run --metrics-listen"
for i in $(seq 0 $((N - 1))); do
    scen=examples/scenarios/${scenarios[$((i % ${#scenarios[@]}))]}.toml
    rules=$common
    for d in "${drifted[@]}"; do [ "$i" = "$d" ] && rules=$other; done
    "$bin" sim "$scen" --serve "$tmp/root$i" >"$tmp/sim$i.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -e "$tmp/root$i/proc/sysinfo" ] && break; sleep 0.1; done
    [ -e "$tmp/root$i/proc/sysinfo" ] || fail "guest $i: the simulator published no root"
    port=$(free_port)
    "$bin" run -f --root "$tmp/root$i" -c "$rules" --metrics-listen "127.0.0.1:$port" \
        >"$tmp/run$i.log" 2>&1 &
    pids+=($!)
    run_pids+=($!)
    ports+=("$port")
    targets+=("\"127.0.0.1:$port\"")
done
p_prom=$(free_port)
cat >"$tmp/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: plugtop
    static_configs: [{targets: [$(IFS=,; echo "${targets[*]}")]}]
CONF
promtool check config "$tmp/prometheus.yml" >/dev/null
start_prometheus() {
    prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
        --web.listen-address="127.0.0.1:$p_prom" >>"$tmp/prometheus.log" 2>&1 &
    echo $! >"$tmp/prom.pid"
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$p_prom/-/ready" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    fail "Prometheus did not become ready (see $tmp/prometheus.log)"
}
start_prometheus
url="http://127.0.0.1:$p_prom"
scalar() {
    curl -sf --get "$url/api/v1/query" --data-urlencode "query=$1" |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
wait_for() { # wait_for SECONDS DESCRIPTION QUERY
    local deadline=$((SECONDS + $1))
    until [ -n "$(scalar "$3" 2>/dev/null)" ]; do
        [ $SECONDS -lt $deadline ] || fail "$2 (query: $3)"
        sleep 1
    done
    echo "ok: $2"
}
wait_for 60 "all $N guests are scraped" "count(up{job=\"plugtop\"} == 1) == $N"
wait_for 120 "a guest flaps" 'max(plugtop_flapping) == 1'
echo "== guest $killed's plugtop is killed"
kill -KILL "${run_pids[$killed]}"
wait_for 30 "its endpoint is down" "up{instance=\"127.0.0.1:${ports[$killed]}\"} == 0"
sleep 12  # past --stale-after 10 below

echo "== plugtop fleet --batch --format json"
set +e
"$bin" fleet --prometheus "$url" --stale-after 10 --batch --format json >"$tmp/fleet.json"
code=$?
set -e
[ "$code" = 1 ] || fail "exit status $code, not 1 (guests in trouble)"
python3 - "$tmp/fleet.json" "127.0.0.1:${ports[$killed]}" \
    "127.0.0.1:${ports[${drifted[0]}]}" "127.0.0.1:${ports[${drifted[1]}]}" "$N" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
killed, d1, d2, n = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
guests = doc["guests"]
def fail(why):
    sys.exit(f"fleet-e2e: FAIL: {why}\n" + json.dumps(doc, indent=1)[:4000])
if len(guests) != n:
    fail(f"{len(guests)} guests listed, not {n}")
first = guests[0]
if first["instance"] != killed or not first["stopped"] or first["troubles"][0] != "stopped":
    fail(f"the killed guest {killed} is not first and marked stopped")
flapping = [i for i, g in enumerate(guests) if g["flapping"]]
calm = [i for i, g in enumerate(guests) if not g["troubles"]]
if not flapping:
    fail("no guest flaps")
if calm and max(flapping) > min(calm):
    fail("a flapping guest comes after a guest without trouble")
if flapping != list(range(1, 1 + len(flapping))):
    fail(f"the flapping guests are not first after the stopped one: rows {flapping}")
odd = [d for d in doc["drift"] if d["odd"]]
if len(odd) != 1 or sorted(odd[0]["instances"]) != sorted([d1, d2]):
    fail(f"the drift groups are {doc['drift']}")
print(f"ok: {n} guests; stopped first ({killed}); {len(flapping)} flapping at rows "
      f"{[i + 1 for i in flapping]}; drift: {odd[0]['note']}: {odd[0]['instances']}")
PY
echo "== plugtop fleet --batch (text)"
"$bin" fleet --prometheus "$url" --stale-after 10 --batch >"$tmp/fleet.txt" || true
head -5 "$tmp/fleet.txt"
grep -q "^stopped" "$tmp/fleet.txt" || fail "the text has no stopped row first"
grep -q "# drift: 2 guests run another cpu-real-load.conf" "$tmp/fleet.txt" \
    || fail "the text does not name the drift: $(cat "$tmp/fleet.txt")"
echo "ok: the text table"

echo "== the screen in a pseudo-terminal, Prometheus stopped and started under it"
python3 scripts/fleet-pty.py "$bin" "$url" \
    "kill \$(cat $tmp/prom.pid); while kill -0 \$(cat $tmp/prom.pid) 2>/dev/null; do sleep 0.1; done" \
    "prometheus --config.file=$tmp/prometheus.yml --storage.tsdb.path=$tmp/data --web.listen-address=127.0.0.1:$p_prom >>$tmp/prometheus.log 2>&1 & echo \$! >$tmp/prom.pid" \
    "20 guests" "2 guests run another cpu-real-load.conf" \
    || fail "the screen (see above)"
echo "fleet-e2e: PASS"

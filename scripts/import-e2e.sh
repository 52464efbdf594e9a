#!/usr/bin/env bash
# `plugtop import` against the real tools, on loopback only: sysstat's
# `sadc 1 N` and `plugtop record --interval 1 --count N` read this machine
# over the same N seconds (default 120) while a load script varies how many
# CPUs are busy; node_exporter is scraped every second by the
# distribution's Prometheus meanwhile. The sa file and the series are
# imported, and `plugtop eval` with the real-load rules
# (examples/rules/cpu-real-load.conf) runs on all three recordings. For the
# intervals both have (matched by time), the figures printed are the share
# with CP_ActiveAVG and CP_idleAVG within 0.02 and the share with the same
# decision; each must be >= 95% (THRESHOLD) for sysstat and for
# node_exporter against plugtop's own recording, or the script fails.
# usage: scripts/import-e2e.sh            (about three minutes; root for the install)
#        DURATION=30 PLUGTOP=target/debug/plugtop scripts/import-e2e.sh  (while developing)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-120}
THRESHOLD=${THRESHOLD:-0.95}
have() { command -v "$1" >/dev/null 2>&1; }
scripts/install-prometheus.sh
if ! have sadf || ! [ -x /usr/lib/sysstat/sadc ] && ! have sadc; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends sysstat >/dev/null
fi
sadc=$(command -v sadc || echo /usr/lib/sysstat/sadc)
[ -x "$sadc" ] || { echo "import-e2e: sadc not found after installing sysstat" >&2; exit 1; }
node_exporter=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "${PLUGTOP:-}" ]; then
    bin=$PLUGTOP # a build at hand (PLUGTOP=target/debug/plugtop while developing)
else
    cargo build --release --quiet
    bin=$PWD/target/release/plugtop
fi
rules=examples/rules/cpu-real-load.conf
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "import-e2e: FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

p_node=$(free_port)
"$node_exporter" --web.listen-address="127.0.0.1:$p_node" >"$tmp/node.log" 2>&1 &
pids+=($!)
p_prom=$(free_port)
cat >"$tmp/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs: [{targets: ["127.0.0.1:$p_node"]}]
CONF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --web.listen-address="127.0.0.1:$p_prom" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$p_prom"
for _ in $(seq 100); do curl -sf "$url/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$url/-/ready" >/dev/null || fail "Prometheus did not become ready (see $tmp/prometheus.log)"
sleep 3 # a few scrapes before the window

# The load: phases of 0, 1, 2, 1 busy CPUs (up to the CPUs there are),
# 15 s each, over the run.
ncpu=$(nproc)
load() {
    local end=$((SECONDS + DURATION + 2)) phase=0 busy
    local shape=(0 1 2 1)
    while [ $SECONDS -lt $end ]; do
        busy=${shape[$((phase % 4))]}
        [ "$busy" -gt "$ncpu" ] && busy=$ncpu
        for _ in $(seq "$busy"); do timeout 15 sh -c 'while :; do :; done' & done
        sleep 15
        wait 2>/dev/null || true
        phase=$((phase + 1))
    done
}
echo "== $DURATION s: sadc 1 $DURATION and plugtop record under a varying load ($ncpu CPUs)"
load &
pids+=($!)
from=$(date +%s.%N)
"$sadc" 1 "$DURATION" "$tmp/sa" &
sadc_pid=$!
"$bin" record -o "$tmp/plugtop.rec" --interval 1 --count "$DURATION" >"$tmp/record.log" &
record_pid=$!
wait "$sadc_pid" || fail "sadc failed"
wait "$record_pid" || fail "plugtop record failed: $(cat "$tmp/record.log")"
to=$(date +%s.%N)
sleep 2 # the last scrapes

echo "== import"
"$bin" import sysstat "$tmp/sa" -o "$tmp/sysstat.rec"
"$bin" import prometheus --prometheus "$url" --instance "127.0.0.1:$p_node" \
    --from "$from" --to "$to" --step 1 -o "$tmp/node.rec"

for r in plugtop sysstat node; do
    "$bin" eval -c "$rules" --replay "$tmp/$r.rec" --jsonl \
        --var CP_ActiveAVG --var CP_idleAVG >"$tmp/$r.jsonl" || true
done

python3 - "$tmp" "$THRESHOLD" <<'PY'
import json, sys
tmp, threshold = sys.argv[1], float(sys.argv[2])
def load(name):
    out = []
    for line in open(f"{tmp}/{name}.jsonl"):
        d = json.loads(line)
        if "time" not in d or "cpu" not in d:
            continue
        v = d["vars"]
        c = d["cpu"]
        out.append((d["time"], v["CP_ActiveAVG"], v["CP_idleAVG"],
                    (c["hotplug"], c["hotunplug"], c["action"])))
    return out
own = load("plugtop")
if not own:
    sys.exit("import-e2e: FAIL: plugtop's own recording gave no decisions")
seen = [o[1] for o in own if o[1] is not None]
kinds = {}
for o in own:
    kinds[o[3][2]] = kinds.get(o[3][2], 0) + 1
print(f"plugtop record: {len(own)} decisions, CP_ActiveAVG from {min(seen):.3f} to {max(seen):.3f}, "
      f"actions {dict(sorted(kinds.items()))}")
ok = True
for name, label in (("sysstat", "sysstat (sa file, 1 s)"), ("node", "node_exporter (scraped every 1 s)")):
    other = load(name)
    if not other:
        print(f"import-e2e: FAIL: {label}: no decisions"); ok = False; continue
    # The two read the same kernel at their own moments: each of the
    # other's intervals is matched to plugtop's nearest in time, after
    # the median offset between them is taken out (sysstat keeps whole
    # seconds only).
    def nearest(t):
        return min(own, key=lambda o: abs(o[0] - t))
    offs = sorted(nearest(o[0])[0] - o[0] for o in other)
    off = offs[len(offs) // 2]
    pairs = []
    for o in other:
        m = nearest(o[0] + off)
        if abs(m[0] - (o[0] + off)) <= 0.5:
            pairs.append((o, m))
    if not pairs:
        print(f"import-e2e: FAIL: {label}: no interval matched in time"); ok = False; continue
    def close(a, b):
        return a is not None and b is not None and abs(a - b) <= 0.02
    active = sum(close(o[1], m[1]) for o, m in pairs) / len(pairs)
    idle = sum(close(o[2], m[2]) for o, m in pairs) / len(pairs)
    same = sum(o[3] == m[3] for o, m in pairs) / len(pairs)
    worst = max(abs(o[1] - m[1]) for o, m in pairs if o[1] is not None and m[1] is not None)
    print(f"{label}: {len(pairs)} intervals matched (offset {off:+.3f} s); "
          f"CP_ActiveAVG within 0.02: {active:.1%}, CP_idleAVG within 0.02: {idle:.1%}, "
          f"same decision: {same:.1%}; largest CP_ActiveAVG difference {worst:.4f}")
    for what, share in (("CP_ActiveAVG", active), ("CP_idleAVG", idle), ("decision", same)):
        if share < threshold:
            print(f"import-e2e: FAIL: {label}: {what} agrees in {share:.1%} < {threshold:.0%}")
            ok = False
sys.exit(0 if ok else 1)
PY
echo "import-e2e: ok"

#!/usr/bin/env bash
# What `plugtop import` costs, measured with /usr/bin/time (user + system
# CPU of plugtop and what it waits for, and its peak RSS):
#   - a day of one-minute sa data (1,440 intervals, 64 CPUs, every
#     activity plugtop reads): generated as `sadf -j` prints it and served
#     by a stand-in `sadf` on PATH (plugtop's work is reading sadf's JSON;
#     the real sadf's own cost is sysstat's, not plugtop's). Budget: < 1 s
#     of CPU and < 64 MiB.
#   - a week of node_exporter series at 60 s (10,080 steps, 64 CPUs × 8
#     modes, 40 meminfo and 40 vmstat series): a fake Prometheus on
#     loopback answers the range queries from generated data. Budget: < 5 s
#     of CPU and < 128 MiB.
# usage: scripts/import-speed.sh   (a release build; python3)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PLUGTOP:-}" ]; then
    bin=$PLUGTOP
else
    cargo build --release --quiet
    bin=$PWD/target/release/plugtop
fi
tmp=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "import-speed: FAIL: $*" >&2; exit 1; }

echo "== a day of one-minute sa data, 64 CPUs"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
cpus = 64
recs = []
with open(f"{tmp}/day.json", "w") as f:
    f.write('{"sysstat": {"hosts": [{"nodename": "big", "sysname": "Linux", "release": "6.4.0", '
            '"machine": "s390x", "number-of-cpus": %d, "file-date": "2026-11-28", '
            '"file-utc-time": "00:00:00", "timezone": "UTC", "statistics": [\n' % cpus)
    for m in range(1440):
        hh, mm = divmod(m, 60)
        busy = 20 + (m * 7) % 60
        line = lambda c: ('{"cpu": "%s", "usr": %.2f, "nice": 0.00, "sys": %.2f, "iowait": 0.50, '
                          '"steal": 0.25, "irq": 0.00, "soft": 0.25, "guest": 0.00, "gnice": 0.00, '
                          '"idle": %.2f}' % (c, busy * 0.8, busy * 0.2, 99.0 - busy))
        cpu = ",\n".join([line("all")] + [line(str(c)) for c in range(cpus)])
        rec = ('{"timestamp": {"date": "2026-11-28", "time": "%02d:%02d:00", "utc": 1, "interval": 60},\n'
               '"cpu-load": [%s],\n'
               '"swap-pages": {"pswpin": 0.00, "pswpout": 1.50},\n'
               '"paging": {"pgpgin": 10.00, "pgpgout": 40.00, "fault": 900.00, "majflt": 0.10, '
               '"pgfree": 1000.00, "pgscank": 5.00, "pgscand": 0.00, "pgsteal": 5.00, "vmeff-percent": 100.00},\n'
               '"memory": {"memfree": 1200000, "avail": 2900000, "memused": 700000, "memused-percent": 17.50, '
               '"buffers": 100000, "cached": 1900000, "commit": 900000, "commit-percent": 22.00, '
               '"active": 1500000, "inactive": 900000, "dirty": 200, "anonpg": 600000, "slab": 100000, '
               '"kstack": 4000, "pgtbl": 8000, "vmused": 20000, "swpfree": 100, "swpused": 0, '
               '"swpused-percent": 0.00, "swpcad": 0, "swpcad-percent": 0.00},\n'
               '"queue": {"runq-sz": 3, "plist-sz": 180, "ldavg-1": 2.50, "ldavg-5": 2.40, "ldavg-15": 2.30, "blocked": 0}}'
               % (hh, mm, cpu))
        f.write(("," if m else "") + rec + "\n")
    f.write('], "restarts": []}]}}\n')
with open(f"{tmp}/day.header", "w") as f:
    f.write("File created by sar/sadc from sysstat version 12.6.1\nList of activities:\n"
            "01: [8b] A_CPU Y: 65\n04: [8a] A_SWAP\n05: [8a] A_PAGE\n07: [8b] A_MEMORY\n09: [8c] A_QUEUE\n")
PY
mkdir "$tmp/bin"
cat >"$tmp/bin/sadf" <<SH
#!/bin/sh
case "\$1" in -H) exec /bin/cat "$tmp/day.header";; *) exec /bin/cat "$tmp/day.json";; esac
SH
chmod +x "$tmp/bin/sadf"
: >"$tmp/sa28"
echo "sadf -j output: $(du -h "$tmp/day.json" | cut -f1)"
PATH="$tmp/bin" /usr/bin/time -f "%U %S %M" -o "$tmp/day.time" \
    "$bin" import sysstat "$tmp/sa28" -o "$tmp/day.rec" >"$tmp/day.out"
cat "$tmp/day.out"
read -r user sys rss <"$tmp/day.time"
cpu=$(python3 -c "print(round($user + $sys, 2))")
echo "day of sa data: ${cpu} s CPU (user $user, system $sys), peak RSS $((rss / 1024)) MiB"
python3 -c "import sys; sys.exit(0 if $user + $sys < 1.0 else 1)" || fail "more than 1 s of CPU"
[ "$rss" -lt $((64 * 1024)) ] || fail "more than 64 MiB"

echo "== a week of node_exporter series at 60 s, 64 CPUs, from a fake Prometheus"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$port" >"$tmp/prom.log" 2>&1 <<'PY' &
import http.server, json, sys, urllib.parse
port = int(sys.argv[1])
CPUS = 64
MODES = {"user": 0.5, "nice": 0.0, "system": 0.1, "idle": 0.35, "iowait": 0.02, "irq": 0.01, "softirq": 0.01, "steal": 0.01}
MEM = ["MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached"] + [f"Extra{i}" for i in range(35)]
VM = ["pgpgin", "pgpgout", "pswpin", "pswpout", "pgscan_kswapd", "pgscan_direct"] + [f"extra{i}" for i in range(34)]
def series(labels, times, f):
    pts = ",".join('[%s,"%s"]' % (t if t % 1 else int(t), f(t)) for t in times)
    return '{"metric":%s,"values":[%s]}' % (json.dumps(labels), pts)
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        query = q["query"][0]
        start, end, step = float(q["start"][0]), float(q["end"][0]), float(q["step"][0])
        n = int(round((end - start) / step)) + 1
        times = [round(start + i * step, 3) for i in range(n)]
        out = []
        if query.startswith("node_cpu_seconds_total"):
            for c in range(CPUS):
                for mode, share in MODES.items():
                    out.append(series({"__name__": "node_cpu_seconds_total", "cpu": str(c), "mode": mode},
                                      times, lambda t, s=share: "%.2f" % ((t - 1.7e9) * s)))
        elif query.startswith("node_cpu_guest"):
            for c in range(CPUS):
                for mode in ("user", "nice"):
                    out.append(series({"__name__": "node_cpu_guest_seconds_total", "cpu": str(c), "mode": mode},
                                      times, lambda t: "0"))
        elif "node_memory" in query:
            for m in MEM:
                out.append(series({"__name__": f"node_memory_{m}_bytes"}, times, lambda t: "1048576000"))
        elif "node_vmstat" in query:
            for v in VM:
                out.append(series({"__name__": f"node_vmstat_{v}"}, times, lambda t: "%d" % ((t - 1.7e9) * 3)))
        elif query.startswith("node_load1") or query.startswith("node_procs_running"):
            out.append(series({"__name__": query.split("{")[0]}, times, lambda t: "2.5"))
        body = ('{"status":"success","data":{"resultType":"matrix","result":[%s]}}' % ",".join(out)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
server=$!
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$port/api/v1/query_range?query=node_load1&start=0&end=0&step=1" >/dev/null 2>&1 && break
    sleep 0.2
done
from=1700000000
to=$((from + 7 * 86400 - 60))
/usr/bin/time -f "%U %S %M %e" -o "$tmp/week.time" \
    "$bin" import prometheus --prometheus "http://127.0.0.1:$port" --instance big:9100 \
    --from "$from" --to "$to" --step 60 -o "$tmp/week.rec" >"$tmp/week.out"
cat "$tmp/week.out"
read -r user sys rss wall <"$tmp/week.time"
cpu=$(python3 -c "print(round($user + $sys, 2))")
echo "week from Prometheus: ${cpu} s CPU (user $user, system $sys), peak RSS $((rss / 1024)) MiB, ${wall} s wall (the fake server's time included)"
python3 -c "import sys; sys.exit(0 if $user + $sys < 5.0 else 1)" || fail "more than 5 s of CPU"
[ "$rss" -lt $((128 * 1024)) ] || fail "more than 128 MiB"
echo "import-speed: ok"

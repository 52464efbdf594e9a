#!/usr/bin/env python3
"""Writes OpenMetrics for `promtool tsdb create-blocks-from openmetrics`:
GUESTS plugtop guests over HOURS hours ending at END (seconds since the
epoch), one sample every STEP seconds, with the families `plugtop fleet`
asks for. Every 25th guest flaps, every 40th faults, 3% run another rule
file, every 100th stopped an hour before the end.

usage: fleet-scale-data.py GUESTS HOURS STEP END > fleet.om
"""
import random
import sys

guests, hours, step, end = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
start = end - int(hours * 3600)
times = list(range(start - start % step + step, end + 1, step))
out = sys.stdout
rng = random.Random(1)
names = [f"guest{i:04d}.example:9866" for i in range(guests)]


def lab(i, extra=""):
    return f'job="plugtop",instance="{names[i]}"' + ("," + extra if extra else "")


def alive(i):
    stop = end - 3600 if i % 100 == 99 else end + 1
    return [t for t in times if t < stop]


def family(name, kind, series):
    """series: (name suffix, labels, [(t, v)]) per series, each in time order."""
    out.write(f"# TYPE {name} {kind}\n")
    for sample, labels, points in series:
        line = f"{sample}{{{labels}}} "
        out.write("".join(f"{line}{v} {t}\n" for t, v in points))


def per_guest(fn):
    return [fn(i) for i in range(guests)]


family("plugtop_guest_info", "gauge", per_guest(lambda i: (
    "plugtop_guest_info",
    lab(i, f'host="g{i}",zvm_guest="true",zvm_name="LNX{i:04d}",lpar="LPAR{i % 8}",architecture="s390x",zvm_version="7.3",machine_type="3931"'),
    [(t, 1) for t in alive(i)])))
family("plugtop_last_interval_timestamp_seconds", "gauge", per_guest(lambda i: (
    "plugtop_last_interval_timestamp_seconds", lab(i), [(t, t) for t in alive(i)])))


def online(i, t):
    if i % 25 == 0:
        return 2 + (t // step) % 2
    return 1 + (hash((i, t // 3600)) % 4)


family("plugtop_cpus_online", "gauge", per_guest(lambda i: (
    "plugtop_cpus_online", lab(i), [(t, online(i, t)) for t in alive(i)])))
family("plugtop_cpus_present", "gauge", per_guest(lambda i: (
    "plugtop_cpus_present", lab(i), [(t, 4) for t in alive(i)])))
family("plugtop_cpu_max", "gauge", per_guest(lambda i: (
    "plugtop_cpu_max", lab(i), [(t, 4) for t in alive(i)])))
family("plugtop_cmm_pages", "gauge", per_guest(lambda i: (
    "plugtop_cmm_pages", lab(i), [(t, (i * 997 + t // 600) % 262144) for t in alive(i)])))
family("plugtop_cmm_max_pages", "gauge", per_guest(lambda i: (
    "plugtop_cmm_max_pages", lab(i), [(t, 262144) for t in alive(i)])))
family("plugtop_update_seconds", "gauge", per_guest(lambda i: (
    "plugtop_update_seconds", lab(i), [(t, 1) for t in alive(i)])))
family("plugtop_flapping", "gauge", per_guest(lambda i: (
    "plugtop_flapping", lab(i), [(t, int(i % 25 == 0)) for t in alive(i)])))
family("plugtop_flap_period_seconds", "gauge", [(
    "plugtop_flap_period_seconds", lab(i), [(t, 6) for t in alive(i)])
    for i in range(0, guests, 25)])
family("plugtop_mode", "gauge", per_guest(lambda i: (
    "plugtop_mode", lab(i, 'mode="auto"'), [(t, 1) for t in alive(i)])))
family("plugtop_rules_info", "gauge", per_guest(lambda i: (
    "plugtop_rules_info",
    lab(i, 'file="/etc/cpuplugd.conf",crc32="%s"' % ("0badf00d" if i % 33 == 7 else "1234abcd")),
    [(t, 1) for t in alive(i)])))
family("plugtop_rule_true", "gauge", [s for i in range(guests) for s in (
    ("plugtop_rule_true", lab(i, 'rule="HOTPLUG"'), [(t, int(online(i, t) == 2)) for t in alive(i)]),
    ("plugtop_rule_true", lab(i, 'rule="HOTUNPLUG"'), [(t, int(online(i, t) == 3)) for t in alive(i)]),
)])
family("plugtop_rule_faults", "counter", per_guest(lambda i: (
    "plugtop_rule_faults_total", lab(i, 'rule="HOTPLUG"'),
    [(t, (k if i % 40 == 3 else 0)) for k, t in enumerate(alive(i))])))
family("plugtop_applied_actions", "counter", [s for i in range(guests) for s in (
    ("plugtop_applied_actions_total", lab(i, f'action="{a}"'),
     [(t, k * (3 if i % 25 == 0 else 0) // 2) for k, t in enumerate(alive(i))])
    for a in ("plug", "unplug"))])
family("plugtop_last_change_timestamp_seconds", "gauge", [
    ("plugtop_last_change_timestamp_seconds",
     lab(i, 'why="unplug → plug; HOTPLUG false → true: idle 0.1 < 0.3"'),
     [(t, t - t % 3600) for t in alive(i)]) for i in range(0, guests, 25)])
out.write("# EOF\n")

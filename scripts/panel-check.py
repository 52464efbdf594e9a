#!/usr/bin/env python3
"""Evaluates every panel query of a Grafana dashboard against a filled
Prometheus and fails on one that is invalid, names a family Prometheus has
no data for, or returns nothing.

usage: scripts/panel-check.py PROMETHEUS_URL DASHBOARD.json SCRAPE_SECONDS RANGE_SECONDS

Grafana's variables are replaced as Grafana would at a dashboard of the
given time range and scrape interval: $job and $instance by the "All"
value, $__rate_interval by four scrape intervals, $__interval by one,
$__range by the range. Every query is evaluated as an instant query (the
tables are instant queries; a time series panel's last point is its
instant query). The scripts/prometheus-e2e.sh guests are built so that
every panel has something to show, the "trouble" and "stale or down"
tables included: an empty panel there is a broken panel.
"""

import json
import re
import sys
import urllib.parse
import urllib.request


def query(base, expr):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as e:  # 400: not PromQL
        return None, e.read().decode(errors="replace")
    except OSError as e:
        return None, str(e)
    if answer.get("status") != "success":
        return None, json.dumps(answer)
    return answer["data"]["result"], None


def substitute(expr, scrape, rng, variables):
    out = expr
    for name, value in variables.items():
        out = out.replace("${" + name + "}", value).replace("$" + name, value)
    return (
        out.replace("$__rate_interval", f"{4 * scrape}s")
        .replace("$__interval", f"{scrape}s")
        .replace("$__range", f"{rng}s")
    )


def families(expr):
    names = set(re.findall(r"\b(?:plugtop|process)_[a-z_]+\b", expr))
    if re.search(r"\bup\b", expr):
        names.add("up")
    return sorted(names)


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    base, path, scrape, rng = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    dashboard = json.load(open(path))
    variables = {
        v["name"]: v.get("allValue", ".*")
        for v in dashboard.get("templating", {}).get("list", [])
        if v.get("type") == "query"
    }
    bad = 0
    checked = 0
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = target.get("expr", "")
            title = f'{panel.get("title")} [{target.get("refId")}]'
            q = substitute(expr, scrape, rng, variables)
            checked += 1
            if "$" in q:
                print(f"BAD   {title}: a variable left unreplaced: {q}")
                bad += 1
                continue
            result, error = query(base, q)
            if result is None:
                print(f"BAD   {title}: not valid PromQL: {error}")
                bad += 1
                continue
            missing = [n for n in families(q) if not (query(base, f"count({n})")[0] or [])]
            if missing:
                print(f"BAD   {title}: no data for {', '.join(missing)} (unknown, or not exercised)")
                bad += 1
            elif not result:
                print(f"BAD   {title}: empty although its families have data: {q}")
                bad += 1
            else:
                print(f"ok    {title}: {len(result)} series")
    print(f"panel-check: {checked} queries, {bad} bad")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())

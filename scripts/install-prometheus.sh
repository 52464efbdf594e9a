#!/usr/bin/env bash
# Installs the distribution's Prometheus server, promtool and node exporter
# when they are missing (Debian/Ubuntu: apt-get; SLES/RHEL: zypper/dnf).
# Nothing is started here: scripts/prometheus-e2e.sh, fleet-e2e.sh and
# fleet-scale.sh start their own copies on loopback with a temporary
# configuration. Those scripts also need curl and python3 (the fleet's
# PTY driver and data generator), installed here too.
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
node_exporter() { have prometheus-node-exporter || have node_exporter; }
if have prometheus && have promtool && node_exporter && have curl && have python3; then
    exit 0
fi
if have apt-get; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # --no-install-recommends: no service is enabled beyond the packages' own.
    apt-get install -y -qq --no-install-recommends prometheus prometheus-node-exporter curl python3 >/dev/null
    # Debian starts the packaged services; the e2e test runs its own.
    if have systemctl; then
        systemctl stop prometheus prometheus-node-exporter >/dev/null 2>&1 || true
    fi
elif have zypper; then
    zypper --non-interactive install golang-github-prometheus-prometheus golang-github-prometheus-node_exporter curl python3
elif have dnf; then
    dnf install -y curl python3
    dnf install -y prometheus prometheus-node-exporter || dnf install -y golang-github-prometheus golang-github-prometheus-node-exporter
else
    echo "install-prometheus: no apt-get, zypper or dnf here; install Prometheus and node exporter by hand" >&2
    exit 1
fi
have prometheus && have promtool && node_exporter || {
    echo "install-prometheus: prometheus, promtool or the node exporter is still missing" >&2
    exit 1
}

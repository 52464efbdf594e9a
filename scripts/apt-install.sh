#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet (apt-get
# update first, only when one is missing; no recommends). The one way the
# install-*.sh scripts install from Debian.
#
# usage: scripts/apt-install.sh PACKAGE...      (as root; safe to run again)
set -euo pipefail
missing=()
for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

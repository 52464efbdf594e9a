#!/usr/bin/env bash
# plugtop's language server in real editors: the distribution's neovim and
# Emacs with eglot (installed with apt when missing), headless, each with its
# file in examples/editors/ as its only configuration and
# scripts/editor-e2e.lua or scripts/editor-e2e.el as the driver. On a test
# root made here (a small guest, as tests/common's FakeRoot::guest builds it,
# plus a meminfo name no kernel has), it opens a rule file with a typo in a
# keyword and an `&&`, and checks, each failing the script when missing:
#   - the file type: cpuplugd.conf and a *.conf in a cpuplugd directory;
#   - the diagnostics for the `&&` and the typo, at their line and column;
#   - a hover on meminfo.MemFree with the test root's value now;
#   - a completion after `meminfo.` offering the test root's own name;
#   - the quick fix on `&&`, applied: the line holds `&`, and the finding goes.
# usage: scripts/editor-e2e.sh   (a few seconds after the release build;
#                                 needs root for the install)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvim >/dev/null || ! command -v emacs >/dev/null ||
    ! dpkg-query -W elpa-eglot >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim emacs-nox elpa-eglot >/dev/null
fi
echo "editor: $(nvim --version | head -1)"
cargo build --release --locked --quiet
bin=$PWD/target/release/plugtop
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The test root: two CPUs online, CMM present.
root=$tmp/root
mkdir -p "$root/proc/sys/vm" "$root/sys/devices/system/cpu"
cat >"$root/proc/stat" <<'STAT'
cpu  201 2 100 2000 10 0 4 14 0 0
cpu0 100 1 50 1000 5 0 2 7 0 0
cpu1 101 1 50 1000 5 0 2 7 0 0
intr 12345 0 0 0
ctxt 999
btime 1700000000
processes 4242
procs_running 2
procs_blocked 0
STAT
echo "0.42 0.30 0.20 2/150 4242" >"$root/proc/loadavg"
printf '%s:%16d kB\n' MemTotal 2097152 MemFree 424242 Cached 262144 Shmem 1024 \
    EndToEndProbe 7 >"$root/proc/meminfo"
printf '%s %d\n' nr_free_pages 106060 pgpgin 1000 pgpgout 2000 pswpin 0 pswpout 0 \
    pgscan_kswapd 10 pgscan_direct 0 >"$root/proc/vmstat"
echo 0 >"$root/proc/sys/vm/cmm_pages"
for f in online present possible; do echo 0-1 >"$root/sys/devices/system/cpu/$f"; done

# The rule files: the one checked, and one whose only job is its name.
mkdir -p "$tmp/etc/cpuplugd"
rules=$tmp/etc/cpuplugd.conf
cat >"$rules" <<'RULES'
# cpuplugd rules with two mistakes: a doubled and, a typo in a keyword
UPDATE="1"
CPU_MIN="1"
CPU_MAX="0"
HOTPLUG="(loadavg > onumcpus + 0.75) && (meminfo.MemFree > 1024)"
HOTUNPLUG="(loadavg < onumcpsu - 0.25) | (idle > 50)"
RULES
echo 'UPDATE="1"' >"$tmp/etc/cpuplugd/other.conf"
echo "plugtop check says:"
"$bin" check --root "$root" "$rules" 2>&1 | sed 's/^/  /' || true

start=$(date +%s.%N)
status=0
E2E_FILE=$rules E2E_OTHER=$tmp/etc/cpuplugd/other.conf E2E_ROOT=$root \
    E2E_PLUGTOP=$bin E2E_CONFIG=$PWD/examples/editors/neovim.lua \
    E2E_TYPO=onumcpsu E2E_LIVE=424242 E2E_MEMINFO=EndToEndProbe \
    timeout 60 nvim --headless --clean -n -i NONE \
    -c "luafile $PWD/scripts/editor-e2e.lua" </dev/null >"$tmp/out" 2>"$tmp/err" || status=$?
end=$(date +%s.%N)
cat "$tmp/out"
if [ -s "$tmp/err" ]; then
    echo "neovim's stderr:"
    sed 's/^/  /' "$tmp/err"
fi
printf 'editor session: %.2f s\n' "$(echo "$end - $start" | bc)"
if [ "$status" -ne 0 ] || ! grep -qx 'all arrived' "$tmp/out"; then
    echo "FAILED (neovim status $status)"
    exit 1
fi

# The same session in Emacs with eglot, configured by examples/editors/emacs.el.
echo "editor: $(emacs --version | head -1), eglot $(dpkg-query -W -f='${Version}' elpa-eglot)"
start=$(date +%s.%N)
status=0
E2E_FILE=$rules E2E_ROOT=$root E2E_PLUGTOP=$bin E2E_CONFIG=$PWD/examples/editors/emacs.el \
    E2E_TYPO=onumcpsu E2E_LIVE=424242 E2E_MEMINFO=EndToEndProbe \
    timeout 60 emacs --batch -Q -l "$PWD/scripts/editor-e2e.el" </dev/null >"$tmp/out" 2>"$tmp/err" || status=$?
end=$(date +%s.%N)
cat "$tmp/out"
printf 'editor session: %.2f s\n' "$(echo "$end - $start" | bc)"
if [ "$status" -ne 0 ] || ! grep -qx 'all arrived' "$tmp/out"; then
    echo "Emacs's messages:"
    sed 's/^/  /' "$tmp/err"
    echo "FAILED (emacs status $status)"
    exit 1
fi
echo "PASSED"

#!/usr/bin/env bash
# Builds the .deb and the .rpm (cargo-deb, cargo-generate-rpm; installed
# with `cargo install` when missing), then installs the .deb into a
# temporary root (dpkg --instdir, so this machine is not changed) and runs
# `plugtop --version` and `man plugtop` from it.
#
# usage: scripts/package.sh          -> target/debian/*.deb, target/generate-rpm/*.rpm
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cargo-deb cargo-generate-rpm; do
    command -v "$tool" >/dev/null || cargo install --locked "$tool"
done
command -v man >/dev/null || { echo "package: man is needed to check the pages (apt-get install man-db)" >&2; exit 1; }

echo "== build, man pages and completions"
cargo build --release --locked --quiet
bin=target/release/plugtop
# The test build's fault hooks (the fault-injection feature, turned on by
# the dev-dependency on plugtop itself) must never be shipped: a
# `cargo test --release` leaves such a binary at this path, and only the
# plain build above replaces it.
if grep -q PLUGTOP_TEST_WRITE_TOKEN "$bin"; then
    echo "package: $bin was built with the test-only fault hooks; run cargo build --release alone" >&2
    exit 1
fi
rm -rf target/package
"$bin" generate man target/package/man >/dev/null
mkdir -p target/package/completions
"$bin" generate completions bash > target/package/completions/plugtop.bash
"$bin" generate completions zsh > target/package/completions/_plugtop
"$bin" generate completions fish > target/package/completions/plugtop.fish

echo "== packages"
deb=$(cargo deb --no-build --quiet 2>/dev/null | tail -1)
[ -f "$deb" ] || deb=$(ls -t target/debian/*.deb | head -1)
cargo generate-rpm
rpm=$(ls -t target/generate-rpm/*.rpm | head -1)
echo "$deb ($(du -h "$deb" | cut -f1))"
echo "$rpm ($(du -h "$rpm" | cut -f1))"

echo "== the .deb holds what a site needs"
listing=$(dpkg-deb -c "$deb" | awk '{print " " $NF}')  # man pages are gzipped by cargo-deb
for want in ./usr/bin/plugtop ./usr/share/man/man1/plugtop.1.gz ./usr/share/man/man1/plugtop-run.1.gz \
    ./usr/share/man/man5/plugtop-rules.5.gz ./usr/share/bash-completion/completions/plugtop \
    ./usr/share/zsh/vendor-completions/_plugtop ./usr/share/fish/vendor_completions.d/plugtop.fish \
    ./usr/lib/systemd/system/plugtop.service ./usr/share/doc/plugtop/examples/grafana/plugtop.json \
    ./usr/share/doc/plugtop/examples/rules/recommended-default.conf \
    ./usr/share/doc/plugtop/examples/prometheus/plugtop-alerts.yml ./usr/share/doc/plugtop/metrics.md; do
    grep -q " $want\$" <<<"$listing" || { echo "package: $want is missing from $deb" >&2; exit 1; }
done
echo ok

if command -v rpm >/dev/null; then
    echo "== the .rpm holds the same"
    rpm_files=$(rpm -qlp "$rpm" 2>/dev/null)
    for want in /usr/bin/plugtop /usr/share/man/man1/plugtop.1 /usr/share/man/man5/plugtop-rules.5 \
        /usr/lib/systemd/system/plugtop.service /usr/share/zsh/site-functions/_plugtop \
        /usr/share/doc/plugtop/examples/grafana/plugtop.json; do
        grep -qx "$want" <<<"$rpm_files" || { echo "package: $want is missing from $rpm" >&2; exit 1; }
    done
    echo ok
fi

echo "== installed into a temporary root"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
touch "$root/var/lib/dpkg/status"
# Its dependencies (libc) are this machine's; the temporary database does
# not know them.
dpkg --root="$root" --force-depends --force-script-chrootless --log=/dev/null -i "$deb" >/dev/null
"$root/usr/bin/plugtop" --version
MANPATH="$root/usr/share/man" MANWIDTH=80 man plugtop | head -5
MANPATH="$root/usr/share/man" MANWIDTH=80 man 5 plugtop-rules | head -3
bash -c "source $root/usr/share/bash-completion/completions/plugtop && complete -p plugtop"
echo "package: PASS"

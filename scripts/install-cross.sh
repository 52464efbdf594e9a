#!/usr/bin/env bash
# Installs what scripts/package.sh needs (Debian 12 here), all from the
# distribution and crates.io:
# - s390x: Debian's cross gcc and C library, and Debian's Rust 1.96
#   (rustc-web, cargo-web) with its standard library's source
#   (rust-web-src). Debian ships no s390x standard library for a Rust
#   new enough for plugtop (1.89): its s390x libstd-rust is 1.63 and its
#   libstd-rust-web for s390x 1.85, and rustup cannot fetch a target
#   here. So package.sh builds std for s390x from that source with
#   `-Z build-std` (RUSTC_BOOTSTRAP=1, as for any toolchain's own
#   sources), its few crates coming from crates.io.
# - the checks: lintian, rpmlint, rpm (rpmbuild), systemd-analyze,
#   man-db, file, qemu-user (runs the s390x binary).
# - cargo-deb, pinned, built from crates.io.
#
# usage: scripts/install-cross.sh      (as root; safe to run again)
set -euo pipefail
cargo_deb_version=3.8.0
packages=(gcc-s390x-linux-gnu libc6-dev-s390x-cross rustc-web cargo-web rust-web-src
    lintian rpmlint rpm systemd man-db file qemu-user dpkg-dev)
"$(dirname "$0")/apt-install.sh" "${packages[@]}"
if ! cargo deb --version 2>/dev/null | grep -q "$cargo_deb_version"; then
    cargo install --locked cargo-deb --version "$cargo_deb_version"
fi
# Debian's rustc must be 1.89 or newer (plugtop's rust-version).
/usr/bin/rustc --version
test -d /usr/lib/rustlib/src/rust/library || { echo "install-cross: rust-web-src did not install the library sources" >&2; exit 1; }
echo "install-cross: ready"

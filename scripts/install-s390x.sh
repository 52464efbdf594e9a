#!/usr/bin/env bash
# Installs what scripts/s390x-suite.sh and scripts/s390x-guest.sh need,
# all from Debian 12 (bookworm):
# - the build: the s390x cross gcc and static C library, Debian's Rust 1.96
#   (rustc-web, cargo-web) and its standard library's sources
#   (rust-web-src; see scripts/install-cross.sh for why), file;
# - the suite: qemu-user-static (qemu-s390x-static and its binfmt_misc
#   registration);
# - the guest: linux-source-6.1 and what building it needs (make, bc,
#   bison, flex, libelf, libssl), cpio and xz for the initramfs,
#   qemu-system-misc (qemu-system-s390x), python3. The guest's busybox is
#   Debian's busybox-static for s390x, which s390x-guest.sh fetches with
#   apt-get into target/ (an apt state of its own: this machine's
#   architectures and package lists are left as they are).
#
# usage: scripts/install-s390x.sh      (as root; safe to run again)
set -euo pipefail
packages=(gcc-s390x-linux-gnu libc6-dev-s390x-cross rustc-web cargo-web rust-web-src file
    qemu-user-static linux-source-6.1 make bc bison flex libelf-dev libssl-dev cpio xz-utils
    qemu-system-misc python3)
"$(dirname "$0")/apt-install.sh" "${packages[@]}"
/usr/bin/rustc --version
test -d /usr/lib/rustlib/src/rust/library || { echo "install-s390x: rust-web-src did not install the library sources" >&2; exit 1; }
echo "install-s390x: ready"

# What scripts/s390x-suite.sh and scripts/s390x-guest.sh share (sourced,
# from the project root): the tools they need, the static s390x build of
# the tests and of plugtop, and the list of tests that user-mode emulation
# cannot run.
#
# The build: Debian's Rust (rustc-web, cargo-web), whose s390x standard
# library is built from rust-web-src with `-Z build-std` (Debian's own
# s390x std is too old), linked static with Debian's cross gcc and glibc
# (`+crt-static`), so the binaries need no s390x C library at run time:
# neither under qemu-s390x (whose `-L PREFIX` would make every absolute
# path, `/` included, resolve inside PREFIX) nor in the guest's initramfs.

s390x_target=s390x-unknown-linux-gnu
s390x_dir=target/s390x
s390x_list=scripts/s390x/not-under-qemu-user.txt

s390x_fail() { echo "${0##*/}: $*" >&2; exit 1; }

# Every tool the build needs, each with the Debian package it comes from.
s390x_need_build_tools() {
    local need
    for need in s390x-linux-gnu-gcc:gcc-s390x-linux-gnu /usr/bin/rustc:rustc-web /usr/bin/cargo:cargo-web; do
        command -v "${need%%:*}" >/dev/null || s390x_fail "${need%%:*} is missing: run scripts/install-s390x.sh (Debian's ${need#*:})"
    done
    [ -d /usr/lib/rustlib/src/rust/library ] ||
        s390x_fail "the standard library's sources are missing: run scripts/install-s390x.sh (Debian's rust-web-src)"
    [ -f /usr/s390x-linux-gnu/lib/libc.a ] ||
        s390x_fail "the static s390x C library is missing: run scripts/install-s390x.sh (Debian's libc6-dev-s390x-cross)"
}

# Cross-builds the test binaries (and with them plugtop, the integration
# tests' CARGO_BIN_EXE_plugtop) and writes "KIND PATH" lines to
# $s390x_dir/tests.list. Heavy: runs under nice.
s390x_build_tests() {
    s390x_need_build_tools
    mkdir -p "$s390x_dir"
    local log=$s390x_dir/build.log json=$s390x_dir/build.json
    echo "building the tests for $s390x_target (static, -Z build-std; log in $log)"
    if ! env RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc CARGO_TARGET_DIR="$s390x_dir" \
        CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc \
        CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
        nice -n 19 /usr/bin/cargo test -Z build-std=std,panic_abort --locked --no-run \
        --target "$s390x_target" --message-format=json-render-diagnostics >"$json" 2>"$log"; then
        tail -20 "$log" >&2
        s390x_fail "the s390x build failed (log: $log)"
    fi
    # Each test executable with its kind, as the list names it: `lib` (the
    # library's unit tests), `bin` (main.rs's), or the integration test's
    # name.
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    a = json.loads(line)
    if a.get("reason") != "compiler-artifact" or not a["profile"]["test"] or not a.get("executable"):
        continue
    kind = a["target"]["kind"][0]
    print(kind if kind in ("lib", "bin") else a["target"]["name"], a["executable"])
' "$json" >"$s390x_dir/tests.list"
    [ -s "$s390x_dir/tests.list" ] || s390x_fail "cargo built no test executable (see $json)"
    local bin=$s390x_dir/$s390x_target/debug/plugtop
    [ -x "$bin" ] || s390x_fail "no $bin after the build"
    file -b "$bin" | grep -q "IBM S/390.*statically linked" || s390x_fail "$bin is not a static s390x binary: $(file -b "$bin")"
}

# The listed tests of one kind, one full test name a line.
s390x_listed() {
    awk -v kind="$1" '!/^#/ && NF >= 2 && $1 == kind { print $2 }' "$s390x_list"
}

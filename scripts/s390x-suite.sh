#!/usr/bin/env bash
# The whole test suite on s390x (big-endian, z/Architecture), under
# user-mode emulation: cross-builds every test executable static for
# s390x-unknown-linux-gnu (as scripts/s390x/lib.sh says) and runs each
# under Debian's qemu-s390x-static. The tests that user-mode emulation
# cannot run are named, each with the emulator's reason, in ONE list,
# scripts/s390x/not-under-qemu-user.txt; they are skipped here and
# scripts/s390x-guest.sh runs them on a real s390x kernel.
#
# The integration tests start plugtop (an s390x binary) themselves: the
# kernel hands such an exec to qemu-s390x-static through binfmt_misc, with
# Debian's own registration (/usr/lib/binfmt.d/qemu-s390x.conf, flags OPF:
# the interpreter fixed at registration, argv[0] kept). Where that is not
# registered yet, this script (as root) mounts binfmt_misc and registers
# it, as systemd-binfmt does at boot on a Debian machine.
#
# Needs what scripts/install-s390x.sh installs; root for binfmt_misc.
# Prints each test executable's counts and time, then the totals; exits
# non-zero when a test fails or a listed test no longer exists.
#
# usage: scripts/s390x-suite.sh [--no-build]   (--no-build: reuse target/s390x)
#   env: TEST_THREADS (default 2: the tests' threads, as RUST_TEST_THREADS),
#        HANG_GUARD (default 1800: the seconds a test waits for what should
#        happen before it calls it hung; 120 natively, and emulation on a
#        loaded machine is tens of times slower)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/s390x/lib.sh
started=$SECONDS
build=1
[ "${1:-}" = --no-build ] && build=0

qemu=/usr/bin/qemu-s390x-static
[ -x "$qemu" ] || s390x_fail "$qemu is missing: run scripts/install-s390x.sh (Debian's qemu-user-static)"

# s390x executables run through binfmt_misc (see above).
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-s390x" ]; then
    [ "$(id -u)" = 0 ] || s390x_fail "s390x executables cannot run here: binfmt_misc has no qemu-s390x (run as root to register it)"
    [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt"
    grep -v '^#' /usr/lib/binfmt.d/qemu-s390x.conf >"$binfmt/register"
    echo "registered Debian's qemu-s390x with binfmt_misc ($(sed -n 's/^interpreter //p' "$binfmt/qemu-s390x"))"
fi
grep -q '^enabled' "$binfmt/qemu-s390x" || s390x_fail "binfmt_misc's qemu-s390x is disabled ($binfmt/qemu-s390x)"
grep -q '^flags: .*F' "$binfmt/qemu-s390x" ||
    s390x_fail "binfmt_misc's qemu-s390x was registered without F: re-register from /usr/lib/binfmt.d/qemu-s390x.conf"

if ((build)); then
    s390x_build_tests
fi
[ -s "$s390x_dir/tests.list" ] || s390x_fail "nothing built: run without --no-build first"
bin=$s390x_dir/$s390x_target/debug/plugtop
echo "$("$bin" --version) on $("$qemu" --version | head -1), $(uname -m) host"
build_time=$((SECONDS - started))

# Each executable, its listed tests skipped (--skip: by name, a module's
# prefix skipping the module). The tests run from the package's root, as
# cargo runs them; their scratch files go to a temporary directory of
# their own.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
total_pass=0 total_fail=0 total_ignored=0 total_skipped=0 failed=()
while read -r kind exe; do
    listed=$(s390x_listed "$kind")
    args=()
    names=$("$exe" --list 2>/dev/null | sed -n 's/: test$//p')
    for name in $listed; do
        # A full name, or a module's prefix (ending in ::).
        if [[ $name == *:: ]]; then
            grep -q "^$name" <<<"$names" || s390x_fail "$s390x_list names $kind $name, which $exe has no test in"
        else
            grep -qxF "$name" <<<"$names" || s390x_fail "$s390x_list names $kind $name, which $exe does not have"
        fi
        args+=(--skip "$name")
    done
    t0=$SECONDS
    out=$scratch/$kind.out
    set +e
    TMPDIR=$scratch RUST_TEST_THREADS=${TEST_THREADS:-2} PLUGTOP_TEST_HANG_GUARD=${HANG_GUARD:-1800} "$exe" "${args[@]}" >"$out" 2>&1
    rc=$?
    set -e
    result=$(grep '^test result: ' "$out" | tail -1)
    read -r pass fail ignored skipped < <(sed -E 's/.* ([0-9]+) passed; ([0-9]+) failed; ([0-9]+) ignored; [0-9]+ measured; ([0-9]+) filtered out.*/\1 \2 \3 \4/' <<<"$result")
    if [ -z "$result" ] || [ -z "${skipped:-}" ]; then
        echo "$kind: no result (exit $rc); its output:"
        tail -30 "$out"
        failed+=("$kind (no result)")
        continue
    fi
    printf '%-16s %4d passed %3d failed %3d ignored %3d listed  %4d s\n' "$kind" "$pass" "$fail" "$ignored" "$skipped" $((SECONDS - t0))
    if [ "$rc" != 0 ] || [ "$fail" != 0 ]; then
        grep -E '^(---- |test .* FAILED$)' "$out" | sed 's/^/    /'
        cp "$out" "$s390x_dir/$kind.failed.log"
        echo "    (output in $s390x_dir/$kind.failed.log)"
        failed+=("$kind")
    fi
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
    total_ignored=$((total_ignored + ignored)) total_skipped=$((total_skipped + skipped))
done <"$s390x_dir/tests.list"

echo "s390x under qemu-user: $total_pass passed, $total_fail failed, $total_ignored ignored," \
    "$total_skipped listed for the guest ($s390x_list);" \
    "build ${build_time} s, tests $((SECONDS - started - build_time)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "s390x-suite: FAIL (${failed[*]})"
    exit 1
fi
echo "s390x-suite: PASS"

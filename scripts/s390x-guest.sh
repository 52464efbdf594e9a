#!/usr/bin/env bash
# plugtop on a real s390x kernel, beside the real cpuplugd. Builds (or
# reuses, from target/s390x-guest/) a small Linux 6.1 for s390x from
# Debian's linux-source-6.1 with the cross compiler (tinyconfig and what
# scripts/s390x/kernel.config adds: SMP, CPU hotplug, CMM, devtmpfs, an
# initramfs, the SCLP console, virtio-9p), an initramfs (Debian's static
# busybox for s390x, and cpuplugd built static from the s390-tools sources
# in ../shared/tools/cpuplugd-cost, unpatched), and the static s390x test
# build (scripts/s390x/lib.sh); boots it in qemu-system-s390x
# (s390-ccw-virtio, -cpu max, 4 CPUs of 8 possible, TCG) with the project
# tree shared over virtio-9p at its own path, and runs inside
# (scripts/s390x/guest-run.sh):
# - the tests that user-mode emulation cannot run
#   (scripts/s390x/not-under-qemu-user.txt);
# - cpuplugd, then `plugtop run`, under the same rules
#   (scripts/s390x/compare.conf: the CPU group and the memory group) and
#   the same load (idle 12 s, busy 10 s, idle 16 s), in three scenarios:
#   stopped by SIGTERM; killed by SIGKILL (then `plugtop restore`); and
#   started from a state that is not "all online" (cpu2 and cpu3 offline,
#   a pool of 256 pages). /proc/cpuinfo is bind-mounted with
#   `version = FF` (z/VM): QEMU's TCG guest says 00, and neither daemon
#   runs the memory group off z/VM.
# It then compares, per scenario, the CPU changes (which CPU, in which
# order), the pool changes, the state after the signal and after the
# restore, prints both timelines and a verdict, and exits non-zero on a
# difference.
#
# The guest is not niced: both daemons act once a second, and a starved
# guest would stretch their intervals. Its kernel trusts the CPU's random
# number instruction (random.trust_cpu=on; QEMU's TCG has it) so that
# getrandom() does not wait for entropy a quiet guest never gathers.
#
# Facts about the emulated machine (QEMU 7.2 TCG) that the comparison
# allows for: CPUs cannot be (de)configured and there are no standby
# CPUs (so only online/offline changes), a CPU that comes online is
# charged about 4e11 system ticks (so the rules look at runnable_proc,
# not at idle), and cmm_pages reads the pages held, not the target.
#
# Needs what scripts/install-s390x.sh installs; root; about 30 minutes
# for the first kernel build on 2 busy cores, then a few minutes a run.
#
# usage: scripts/s390x-guest.sh [--no-build] [JOB...]
#   JOB: tests, compare (default both); --no-build reuses the s390x
#   test build in target/s390x (scripts/s390x-suite.sh makes it).
#   env: GUEST_TIMEOUT (seconds, default 1800), GUEST_MEMORY (default 1G)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/s390x/lib.sh
started=$SECONDS
top=$PWD
g=target/s390x-guest
build=1
if [ "${1:-}" = --no-build ]; then build=0; shift; fi
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(tests compare)
harness=${HARNESS:-$top/../shared/tools/cpuplugd-cost}
mkdir -p "$g"

for need in qemu-system-s390x:qemu-system-misc make:make bc:bc flex:flex bison:bison cpio:cpio \
    apt-get:apt python3:python3; do
    command -v "${need%%:*}" >/dev/null || s390x_fail "${need%%:*} is missing: run scripts/install-s390x.sh (Debian's ${need#*:})"
done
[ -f /usr/src/linux-source-6.1.tar.xz ] || s390x_fail "no /usr/src/linux-source-6.1.tar.xz: run scripts/install-s390x.sh"
[ -f "$harness/s390-tools-cpuplugd-src.tar.xz" ] || s390x_fail "no cpuplugd sources in $harness (set HARNESS)"

# --- the kernel, rebuilt only when its source or its options change
kernel() {
    local src=$g/linux-source-6.1 kb=$g/kbuild key
    key=$(dpkg-query -W -f '${Version}' linux-source-6.1)-$(sha256sum scripts/s390x/kernel.config | cut -c1-16)
    if [ -f "$g/bzImage" ] && [ "$(cat "$g/bzImage.key" 2>/dev/null)" = "$key" ]; then
        echo "kernel: reusing $g/bzImage ($key)"
        return
    fi
    echo "kernel: building Linux $key for s390x (log in $g/kbuild.log; about 30 minutes)"
    [ -d "$src" ] || nice -n 19 tar -C "$g" -xJf /usr/src/linux-source-6.1.tar.xz
    local k=(make -C "$src" ARCH=s390 CROSS_COMPILE=s390x-linux-gnu- O="$top/$kb")
    rm -rf "$kb"
    mkdir -p "$kb"
    "${k[@]}" tinyconfig >"$g/kbuild.log" 2>&1
    grep -v '^#' scripts/s390x/kernel.config | grep . >"$kb/fragment"
    "$src/scripts/kconfig/merge_config.sh" -m -O "$kb" "$kb/.config" "$kb/fragment" >>"$g/kbuild.log" 2>&1
    "${k[@]}" olddefconfig >>"$g/kbuild.log" 2>&1
    local line dropped=()
    while read -r line; do
        grep -qx "$line" "$kb/.config" || dropped+=("$line")
    done <"$kb/fragment"
    [ ${#dropped[@]} -eq 0 ] || s390x_fail "the kernel's configuration dropped ${dropped[*]} (scripts/s390x/kernel.config)"
    nice -n 19 "${k[@]}" -j"$(nproc)" bzImage >>"$g/kbuild.log" 2>&1 ||
        { tail -20 "$g/kbuild.log" >&2; s390x_fail "the kernel build failed (log: $g/kbuild.log)"; }
    cp "$kb/arch/s390/boot/bzImage" "$g/bzImage"
    echo "$key" >"$g/bzImage.key"
}

# --- cpuplugd, static for s390x, from the sources as they are
cpuplugd() {
    local tarball=$harness/s390-tools-cpuplugd-src.tar.xz
    if [ -x "$g/cpuplugd" ] && [ "$g/cpuplugd" -nt "$tarball" ]; then
        echo "cpuplugd: reusing $g/cpuplugd"
        return
    fi
    rm -rf "$g/s390-tools"
    tar -C "$g" -xJf "$tarball"
    local release
    release=$(sed -n 's/.*-DS390_TOOLS_RELEASE=\([^ ]*\).*/\1/p' "$harness/build-cpuplugd.sh")
    (cd "$g/s390-tools" && nice -n 19 s390x-linux-gnu-gcc -static -O2 -D_GNU_SOURCE \
        -DS390_TOOLS_RELEASE="${release:-unknown}" -DS390_TOOLS_LIBDIR=/usr/lib/s390-tools \
        -DS390_TOOLS_DATADIR=/usr/share/s390-tools -DS390_TOOLS_SYSCONFDIR=/etc \
        -DS390_TOOLS_BINDIR=/usr/bin -Iinclude -o ../cpuplugd cpuplugd/*.c \
        libutil/util_base.c libutil/util_file.c libutil/util_libc.c libutil/util_path.c \
        libutil/util_scandir.c libutil/util_panic.c libutil/util_prg.c libutil/util_opt.c \
        libutil/util_list.c -lm) >"$g/cpuplugd.log" 2>&1 ||
        { tail -20 "$g/cpuplugd.log" >&2; s390x_fail "the cpuplugd build failed (log: $g/cpuplugd.log)"; }
    echo "cpuplugd: built $g/cpuplugd ($release)"
}

# --- Debian's static busybox for s390x, fetched with an apt state of its
# own (this machine's architectures and lists stay as they are)
busybox() {
    if [ -x "$g/busybox" ]; then
        echo "busybox: reusing $g/busybox"
        return
    fi
    local a=$top/$g/apt
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
    touch "$a/status"
    local opts=(-o APT::Architecture=s390x -o APT::Architectures::=s390x -o Dir::State::Lists="$a/lists"
        -o Dir::Cache="$a/cache" -o Dir::State::status="$a/status" -o Debug::NoLocking=1)
    apt-get "${opts[@]}" update -qq
    (cd "$a" && rm -f busybox-static_*.deb && apt-get "${opts[@]}" download busybox-static 2>/dev/null)
    rm -rf "$a/unpacked"
    dpkg-deb -x "$a"/busybox-static_*_s390x.deb "$a/unpacked"
    cp "$a/unpacked/bin/busybox" "$g/busybox"
    echo "busybox: $(dpkg-deb -f "$a"/busybox-static_*_s390x.deb Version)"
}

# --- the initramfs: busybox, cpuplugd and an /init that mounts the
# project's tree and runs guest-run.sh
initramfs() {
    local d=$g/initramfs
    rm -rf "$d"
    mkdir -p "$d/bin" "$d/proc" "$d/sys" "$d/dev" "$d/tmp" "$d/run" "$d/var/lock" "$d/etc" "$d$top"
    cp "$g/busybox" "$g/cpuplugd" "$d/bin/"
    cat >"$d/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mkdir -p /run/lock /dev/pts
mount -t devpts -o ptmxmode=0666 devpts /dev/pts
ip link set lo up
top=$(sed -n 's/.*plugtop.top=\([^ ]*\).*/\1/p' /proc/cmdline)
jobs=$(sed -n 's/.*plugtop.jobs=\([^ ]*\).*/\1/p' /proc/cmdline | tr , ' ')
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=loose top "$top" || echo "guest: no 9p share"
echo "guest: $(uname -sr), $(grep -c '^processor ' /proc/cpuinfo) CPUs, $(sed -n 's/MemTotal: *//p' /proc/meminfo)"
sh "$top/scripts/s390x/guest-run.sh" "$top" $jobs
sync
poweroff -f
EOF
    chmod +x "$d/init"
    (cd "$d" && find . | cpio -o -H newc --quiet) >"$g/initramfs.cpio"
}

# --- plugtop and the test executables for the guest, without their debug
# information (a debug build's 100-200 MB each would otherwise be read
# over 9p page by page)
guest_bins() {
    rm -rf "$g/bin"
    mkdir -p "$g/bin"
    s390x-linux-gnu-strip -g -o "$g/bin/plugtop" "$s390x_dir/$s390x_target/debug/plugtop"
    local kind exe
    while read -r kind exe; do
        s390x-linux-gnu-strip -g -o "$g/bin/${exe##*/}" "$exe"
    done <"$s390x_dir/tests.list"
}

kernel
cpuplugd
busybox
if ((build)); then s390x_build_tests; fi
[ -s "$s390x_dir/tests.list" ] || s390x_fail "no s390x test build: run without --no-build"
guest_bins
initramfs
prepared=$((SECONDS - started))

# --- the boot
out=$g/out
rm -rf "$out"
mkdir -p "$out"
jobs_arg=$(
    IFS=,
    echo "${jobs[*]}"
)
echo "booting: qemu-system-s390x, TCG, 4 CPUs of 8 ($(qemu-system-s390x --version | head -1)); console in $g/console.log"
boot0=$SECONDS
set +e
timeout "${GUEST_TIMEOUT:-1800}" qemu-system-s390x -machine s390-ccw-virtio -cpu max \
    -smp 4,maxcpus=8 -m "${GUEST_MEMORY:-1G}" -nographic -no-reboot \
    -kernel "$g/bzImage" -initrd "$g/initramfs.cpio" \
    -append "console=ttysclp0 quiet random.trust_cpu=on plugtop.top=$top plugtop.jobs=$jobs_arg" \
    -fsdev "local,id=top,path=$top,security_model=none" -device virtio-9p-ccw,fsdev=top,mount_tag=top \
    </dev/null >"$g/console.log" 2>&1
rc=$?
set -e
tr -d '\r' <"$g/console.log" | grep '^guest: ' || true
[ "$rc" = 0 ] || s390x_fail "qemu-system-s390x ended with $rc (124: GUEST_TIMEOUT); console in $g/console.log"
grep -q '^guest: done' <(tr -d '\r' <"$g/console.log") || s390x_fail "the guest did not finish; console in $g/console.log"
echo "guest ran $((SECONDS - boot0)) s (build and preparation $prepared s)"

# --- the verdict
python3 scripts/s390x/verdict.py "$out" "${jobs[@]}"

#!/bin/sh
# Runs inside the s390x guest that scripts/s390x-guest.sh boots (busybox
# sh, as root, on the real kernel), from the project's tree shared over
# virtio-9p at the path it has on the host. It only collects: what it
# finds goes to target/s390x-guest/out/, which the host script reads and
# judges.
#
# usage (from the guest's /init): guest-run.sh PROJECT_ROOT JOB...
#   JOB tests:   the tests scripts/s390x/not-under-qemu-user.txt lists
#   JOB compare: cpuplugd and `plugtop run`, one after the other, under the
#                same rules and the same load (see scenario below)
set -u
top=$1
shift
out=$top/target/s390x-guest/out
# plugtop and the test executables, stripped of debug information by the
# host (target/s390x-guest/bin), are copied into the guest's memory: run
# from the share, every page of a 100-200 MB debug executable would come
# over 9p. The integration tests start plugtop from the path cargo gave
# it: the copy is bound over it.
bin=/tmp/bin
if [ ! -d $bin ]; then
    cp -r "$top/target/s390x-guest/bin" $bin
    mount --bind $bin/plugtop "$top/target/s390x/s390x-unknown-linux-gnu/debug/plugtop"
fi
plugtop=$bin/plugtop
rules=$top/scripts/s390x/compare.conf
cpu=/sys/devices/system/cpu
mkdir -p "$out"

# The CPUs that can go off and on line (those with an `online` file).
cpus=""
for d in "$cpu"/cpu[0-9]*; do
    [ -e "$d/online" ] && cpus="$cpus ${d##*/cpu}"
done

now() { read -r up _ </proc/uptime; NOW=$up; }
# The guest's state, in STATE: the online CPUs and the pool as the kernel
# reads it (on a real kernel cmm_pages says the pages held, which follows
# a write as the kernel allocates or frees them).
state() {
    s=""
    for c in $cpus; do
        read -r v <"$cpu/cpu$c/online"
        [ "$v" = 1 ] && s="$s${s:+,}$c"
    done
    # (cat: the kernel answers a read of cmm_pages at an offset past 0,
    # as the shell's read makes them, with nothing)
    p=$(cat /proc/sys/vm/cmm_pages)
    STATE="online=$s pool=$p"
}
# Waits (up to 60 s) until the state has not changed for two seconds.
settle() {
    state
    last=$STATE
    same=0
    i=0
    while [ $i -lt 120 ] && [ $same -lt 4 ]; do
        sleep 0.5
        state
        if [ "$STATE" = "$last" ]; then same=$((same + 1)); else same=0; last=$STATE; fi
        i=$((i + 1))
    done
}
# Puts the guest in a start state: ONLINE (a comma list), the pool POOL.
reset() {
    for c in $cpus; do
        case ",$1," in *",$c,"*) want=1 ;; *) want=0 ;; esac
        read -r v <"$cpu/cpu$c/online"
        [ "$v" = "$want" ] || echo "$want" >"$cpu/cpu$c/online"
    done
    echo "$2" >/proc/sys/vm/cmm_pages
    rm -rf /run/cpuplugd.pid /run/plugtop
    settle
}
# Records the state, with the seconds since T0, whenever it changes.
sampler() {
    last=""
    while :; do
        state
        if [ "$STATE" != "$last" ]; then
            now
            echo "$NOW $STATE"
            last=$STATE
        fi
        sleep 0.2
    done
}
loads=""
load_on() {
    for _ in 1 2 3 4 5 6 7 8; do
        (while :; do :; done) &
        loads="$loads $!"
    done
}
load_off() {
    [ -n "$loads" ] && kill $loads 2>/dev/null
    wait $loads 2>/dev/null
    loads=""
}

# One daemon through one scenario. The load, from the daemon's start: idle
# 12 s, busy 10 s (eight processes that never sleep), idle 16 s; then the
# signal. The rules (compare.conf) plug while busy and unplug while idle,
# and grow the pool while idle and shrink it while busy, each to its limit
# well within a phase, so both daemons must make the same changes.
#   scenario NAME START_ONLINE START_POOL SIGNAL DAEMON
scenario() {
    name=$1.$5
    reset "$2" "$3"
    state
    echo "$STATE" >"$out/$name.start"
    sampler >"$out/$name.timeline" &
    spid=$!
    now
    echo "$NOW" >"$out/$name.t0"
    case $5 in
        cpuplugd) /bin/cpuplugd -f -V -c "$rules" >"$out/$name.log" 2>&1 & ;;
        plugtop) "$plugtop" run -f -V -c "$rules" >"$out/$name.log" 2>&1 & ;;
    esac
    dpid=$!
    sleep 12
    load_on
    sleep 10
    load_off
    sleep 16
    # What the daemon logged before the signal (its restore comes after).
    wc -l <"$out/$name.log" >"$out/$name.cut"
    kill -"$4" "$dpid"
    wait "$dpid"
    echo $? >"$out/$name.exit"
    state
    echo "$STATE" >"$out/$name.at-exit"
    if [ "$4" = KILL ] && [ "$5" = plugtop ]; then
        "$plugtop" restore >"$out/$name.restore.log" 2>&1
        echo $? >>"$out/$name.restore.log"
    fi
    settle
    kill "$spid"
    wait "$spid" 2>/dev/null
    echo "$STATE" >"$out/$name.after"
    echo "guest: $name: $(cat "$out/$name.start") -> $(cat "$out/$name.at-exit") -> $STATE (exit $(cat "$out/$name.exit"))"
}

for job in "$@"; do
    case $job in
        tests)
            # Each listed test (a module's prefix: its tests), in its own
            # executable.
            while read -r kind exe; do
                names=$(awk -v k="$kind" '!/^#/ && NF >= 2 && $1 == k { print $2 }' "$top/scripts/s390x/not-under-qemu-user.txt")
                [ -n "$names" ] || continue
                exe=$bin/${exe##*/}
                # shellcheck disable=SC2086 # one argument per name
                (cd "$top" && TMPDIR=/tmp RUST_TEST_THREADS=2 PLUGTOP_TEST_HANG_GUARD=1800 "$exe" $names) >"$out/tests.$kind.log" 2>&1
                echo "$?" >"$out/tests.$kind.exit"
                echo "guest: tests $kind: $(grep '^test result' "$out/tests.$kind.log")"
            done <"$top/target/s390x/tests.list"
            ;;
        compare)
            # z/VM for both daemons' memory group: the TCG guest says
            # `version = 00` (not z/VM), so a copy that says FF is bound
            # over /proc/cpuinfo.
            sed 's/version = [0-9A-F][0-9A-F]/version = FF/' /proc/cpuinfo >/tmp/cpuinfo
            mount --bind /tmp/cpuinfo /proc/cpuinfo
            all=$(echo $cpus | tr ' ' ',')
            echo "$all" >"$out/cpus"
            for d in cpuplugd plugtop; do scenario term "$all" 0 TERM $d; done
            for d in cpuplugd plugtop; do scenario kill "$all" 0 KILL $d; done
            for d in cpuplugd plugtop; do scenario partial 0,1 256 TERM $d; done
            umount /proc/cpuinfo
            reset "$all" 0
            ;;
    esac
done
echo "guest: done"

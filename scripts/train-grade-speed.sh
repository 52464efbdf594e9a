#!/usr/bin/env bash
# Wall time and peak RSS of `plugtop train grade` on the built-in course for
# a class of 30 trainees, each handing in every exercise: a third the start
# file, a third the reference, a third something hostile (a binary file, a
# link to /etc/shadow, a directory named like the file, 10 MB). Target:
# the table in under 5 s on 2 cores.
# usage: scripts/train-grade-speed.sh   (PLUGTOP_BIN=path times another build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${PLUGTOP_BIN:-}" ]]; then
    cargo build --release --quiet
    PLUGTOP_BIN=target/release/plugtop
fi
course=examples/courses/cpuplugd-basics.toml
dir=examples/courses/cpuplugd-basics
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ids=$(sed -n 's/^id = "\(.*\)"/\1/p' "$course")
for i in $(seq -w 1 30); do
    me="$tmp/class/trainee-$i"
    mkdir -p "$me"
    for id in $ids; do
        case $id in
            memory-keyword) files=memkey ;;
            cpu-max) files=cpumax ;;
            diagnose-flap) echo "HOTPLUG: ((1 - CP_Active) * onumcpus) < 0.3" > "$me/$id.answer"; continue ;;
            *) files=$id ;;
        esac
        case $((10#$i % 3)) in
            0) cp "$dir/$files-start.conf" "$me/$id.conf" ;;
            1) cp "$dir/$files-reference.conf" "$me/$id.conf" ;;
            2) case $((10#$i % 4)) in
                   0) head -c 4096 /dev/urandom > "$me/$id.conf" ;;
                   1) ln -s /etc/shadow "$me/$id.conf" ;;
                   2) mkdir "$me/$id.conf" ;;
                   3) head -c 10000000 /dev/zero | tr '\0' '#' > "$me/$id.conf" ;;
               esac ;;
        esac
    done
done
for format in text csv json; do
    /usr/bin/time -f "30 trainees × $(echo $ids | wc -w) exercises, $format: %e s wall, %U s user, %M KB peak RSS" \
        "$PLUGTOP_BIN" train grade "$course" "$tmp/class" --format "$format" > "$tmp/out.$format"
done
grep -c FAIL "$tmp/out.text" | sed 's/^/failed rows: /'
tail -n 12 "$tmp/out.text"

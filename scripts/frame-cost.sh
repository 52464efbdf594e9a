#!/usr/bin/env bash
# Instructions a frame of the screen, counted by callgrind: the example
# `frame_cost` (the simulator's DayTrader run, recommended rules, one
# reading a frame, drawn through crossterm's backend into a sink) run for
# FEW and MANY frames; start-up, the 120 readings before and the first full
# frame cancel in the difference:
#   frame  = (I(MANY) - I(FEW)) / (MANY - FEW), counting only `frame_cost::frame`
#            (view::draw into ratatui's buffer, its diff, the escape sequences);
#   whole  = the same over the whole process (the reading decided and taken too).
# With TOP=N the N functions that cost the MANY-frame run most (inclusive).
#
# usage: scripts/frame-cost.sh [WIDTH HEIGHT [FEW MANY]]   (default 160 48 50 150)
#        FRAME_COST_BIN=path scripts/frame-cost.sh   (another build, not rebuilt)
set -euo pipefail
cd "$(dirname "$0")/.."
width=${1:-160}
height=${2:-48}
few=${3:-50}
many=${4:-150}
bin=${FRAME_COST_BIN:-target/release/examples/frame_cost}
[ -n "${FRAME_COST_BIN:-}" ] || cargo build --release --quiet --example frame_cost
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # FRAMES, prints "frame-instructions whole-instructions"
    local f=$out/frames.$1
    valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect='frame_cost::frame' \
        "$bin" "$1" "$width" "$height" 2>/dev/null
    local framed
    framed=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    valgrind --tool=callgrind --callgrind-out-file="$f.all" "$bin" "$1" "$width" "$height" 2>/dev/null
    local whole
    whole=$(callgrind_annotate "$f.all" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    echo "$framed $whole"
}
read -r f1 w1 < <(count "$few")
read -r f2 w2 < <(count "$many")
frames=$((many - few))
echo "screen at ${width}x${height}, frames $few and $many:"
echo "  a frame (draw, diff, escapes): $(((f2 - f1) / frames)) instructions"
echo "  a reading and its frame (whole process): $(((w2 - w1) / frames)) instructions"
if [ -n "${TOP:-}" ]; then
    callgrind_annotate --inclusive=yes "$out/frames.$many" 2>/dev/null | sed -n "1,$((TOP + 25))p" | tail -n +20
fi

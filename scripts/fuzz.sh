#!/usr/bin/env bash
# Runs every fuzz target for N minutes each (default 10), two at a time,
# seeded from the repository's own rule files, fixtures, recordings and
# scenarios. Needs the nightly toolchain and `cargo install cargo-fuzz`.
# Prints each target's executions and whether it found a crash; crashing
# inputs land in fuzz/artifacts/<target>/ and become regression tests in
# tests/fuzz_regressions.rs.
#
#   scripts/fuzz.sh [MINUTES] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-10}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(rules proc_parsers recording scenario)
seconds=$((minutes * 60))
mkdir -p fuzz/logs

seed() {
    local target="$1" dir="fuzz/corpus/$1"
    mkdir -p "$dir"
    case "$target" in
    rules)
        find examples/rules tests/fixtures ../shared/seed-rules ../shared/conformance/cases \
            -name '*.conf' 2>/dev/null | head -400 | while read -r f; do
            cp "$f" "$dir/$(echo "$f" | tr '/' '_')"
        done ;;
    proc_parsers)
        find tests/fixtures -type f \( -name stat -o -name meminfo -o -name vmstat \
            -o -name loadavg -o -name online -o -name present -o -name cpuinfo \) |
            while read -r f; do cp "$f" "$dir/$(echo "$f" | tr '/' '_')"; done ;;
    recording)
        find tests/fixtures tests/data -name '*.rec' 2>/dev/null | while read -r f; do
            cp "$f" "$dir/$(echo "$f" | tr '/' '_')"
        done
        if [ -z "$(ls -A "$dir")" ]; then
            cargo run --quiet --release -- record --snapshots tests/fixtures/series/oldkernel \
                -o "$dir/oldkernel.rec" >/dev/null
        fi ;;
    scenario)
        cp examples/scenarios/*.toml "$dir/" ;;
    esac
}

run() {
    local target="$1" log="fuzz/logs/$1.log"
    mkdir -p fuzz/logs "fuzz/artifacts/$target"
    seed "$target"
    # One allocation over 256 MB is a finding; the whole process may use
    # more, since AddressSanitizer keeps freed memory in quarantine (kept
    # small here) and libFuzzer keeps the corpus.
    if ASAN_OPTIONS="quarantine_size_mb=32:${ASAN_OPTIONS:-}" \
        cargo +nightly fuzz run -O "$target" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=1536 -malloc_limit_mb=256 \
        -timeout=10 -max_len=65536 \
        -print_final_stats=1 >"$log" 2>&1; then
        result="no crash"
    else
        result="FOUND A CRASH (see $log and fuzz/artifacts/$target)"
    fi
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    echo "$target: $execs executions in $minutes min, $result"
}

cargo +nightly fuzz build -O >/dev/null
status=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    pids=()
    for t in "${targets[@]:i:2}"; do
        run "$t" > "fuzz/logs/$t.result" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    for t in "${targets[@]:i:2}"; do cat "fuzz/logs/$t.result"; done
done
grep -l FOUND fuzz/logs/*.result >/dev/null 2>&1 && status=1
exit $status

#!/usr/bin/env bash
# Issue 24's acceptance for the test suite: `cargo test --locked` RUNS
# times in a row (default 3) while `stress --cpu 4` loads the machine
# beside it; prints each run's wall time (after the build), load and
# counts, and exits 1 if any run failed (its log stays in the work dir).
#
# usage: scripts/tests-under-stress.sh [RUNS]   (needs stress: apt-get install stress)
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
command -v stress >/dev/null || { echo "needs stress (apt-get install stress)" >&2; exit 1; }
cargo test --locked --no-run --quiet || exit 1
work=$(mktemp -d)
stress --cpu 4 --timeout 3600 >/dev/null 2>&1 &
load=$!
trap 'kill $load 2>/dev/null; pkill -P $load 2>/dev/null' EXIT
failed=0
for i in $(seq "$runs"); do
  start=$(date +%s.%N)
  cargo test --locked >"$work/run$i.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  counts=$(grep -E '^test result' "$work/run$i.log" | awk '{p+=$4; f+=$6; g+=$8} END {print p" passed, "f" failed, "g" ignored"}')
  printf 'run %d: exit %d, wall %.1f s, load %s, %s\n' "$i" "$rc" "$(echo "$end - $start" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$counts"
  [[ $rc == 0 ]] || { failed=1; echo "  log: $work/run$i.log"; }
done
exit $failed

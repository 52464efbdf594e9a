#!/usr/bin/env bash
# Refreshes tests/data/conformance-cases.tar.zst, the copy of the shared
# conformance corpus that `cargo test` runs when ../shared is not beside the
# checkout. Run it after the corpus in ../shared/conformance/cases changes.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared/conformance
[ -d "$shared/cases" ] || { echo "no $shared/cases beside this checkout" >&2; exit 1; }
tar -C "$shared" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - cases \
  | zstd -19 -q -f -o tests/data/conformance-cases.tar.zst
echo "bundled $(ls "$shared/cases" | wc -l) cases into tests/data/conformance-cases.tar.zst"

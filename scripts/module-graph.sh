#!/bin/sh
# Prints the module graph of src/ (lib and binary): every use between
# top-level modules with how many places make it, then each cycle between
# sibling modules at any level with the file:line of every use that forms
# it. The same check `cargo test --test suite structure::` runs; exit 1 on a cycle.
set -eu
cd "$(dirname "$0")/.."
exec cargo test --locked --test suite --quiet -- --exact structure::no_modules_use_each_other_in_a_circle --nocapture

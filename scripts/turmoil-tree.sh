#!/usr/bin/env bash
# Prints the tree hash of vendor/turmoil: the SHA1 of `sha1sum`'s listing of
# its files (paths from the repository's root, sorted bytewise), but for
# TESTED (the record of its tests), Cargo.lock (cargo's, ignored by git)
# and target/. tests/sim/vendored.rs computes the same in Rust.
set -euo pipefail
cd "$(dirname "$0")/.."
find vendor/turmoil -type f ! -path vendor/turmoil/TESTED ! -path vendor/turmoil/Cargo.lock \
    ! -path 'vendor/turmoil/target/*' -print0 |
    LC_ALL=C sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1

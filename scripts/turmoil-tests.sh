#!/usr/bin/env bash
# Runs turmoil's own tests on the patched copy (vendor/turmoil/PATCH.md)
# and, when every one passes, records the run in vendor/turmoil/TESTED:
# the tree of vendor/turmoil it ran on (scripts/turmoil-tree.sh), the
# toolchain and the result. The suite (tests/sim/vendored.rs) fails while
# the record names another tree than the one checked out, naming this
# script: a change to turmoil lands with its tests run. They are not part
# of every CI run: their build alone took 2m42s of CI's 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
cargo test --release -p turmoil --all-features --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
sum=$(awk '/^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed;?$/) p += $i; if ($(i+1) ~ /^failed;?$/) f += $i; if ($(i+1) ~ /^ignored;?$/) g += $i } }
     END { printf "%d passed, %d failed, %d ignored", p, f, g }' "$log")
echo "turmoil's own tests: $sum"
if [ "$status" != 0 ]; then
    echo "scripts/turmoil-tests.sh: failed; vendor/turmoil/TESTED left as it was" >&2
    exit "$status"
fi
{
    echo "# turmoil's own tests passed on this tree of vendor/turmoil: written by"
    echo "# scripts/turmoil-tests.sh, checked by tests/sim/vendored.rs."
    echo "tree $(bash scripts/turmoil-tree.sh)"
    echo "command cargo test --release -p turmoil --all-features"
    echo "rustc $(rustc --version | cut -d' ' -f2)"
    echo "result $sum"
} > vendor/turmoil/TESTED
cat vendor/turmoil/TESTED

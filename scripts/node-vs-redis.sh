#!/usr/bin/env bash
# Regenerates reports/node-vs-redis/: the library matrix run again on real
# redis-server and redis-sentinel (`redlock-sim matrix ... --servers redis`,
# seeds 1..=SEEDS, default 10, three runs at once) into
# reports/node-vs-redis/redis/, then agreement.csv and README.md beside the
# node's committed matrix (reports/libraries/) on the same seeds
# (`redlock-sim compare`). TABLE_ONLY=1: only the table, from the runs
# already there. About 35 minutes on 2 cores with SEEDS=10; run it alone
# (real time: other work on the machine moves timing-sensitive cells).
# Needs the drivers built (bash scripts/test.sh builds them).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${SEEDS:-10}"
cargo build --release --quiet
if [ "${TABLE_ONLY:-}" != 1 ]; then
    target/release/redlock-sim matrix scenarios/libraries/matrix.toml \
        --servers redis --seeds "1..=$seeds" --jobs 3 --out reports/node-vs-redis/redis \
        --keep-runs first
fi
target/release/redlock-sim compare reports/libraries reports/node-vs-redis/redis \
    --out reports/node-vs-redis --names node,redis

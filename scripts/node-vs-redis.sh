#!/usr/bin/env bash
# Regenerates reports/node-vs-redis/: the library matrix on the project's
# node (`redlock-sim matrix ... --servers node`, seeds 1..=SEEDS, default
# 20, three runs at once) into reports/libraries-node/, then agreement.csv
# and README.md beside the real-Redis matrix (reports/libraries/, made by
# scripts/libraries.sh) on the seeds both ran (`redlock-sim compare`).
# TABLE_ONLY=1: only the table, from the runs already there. About 100
# minutes on 2 cores with SEEDS=20; run it alone (real time: other work on
# the machine moves timing-sensitive cells). Needs the drivers built (bash
# scripts/test.sh builds them; then bash drivers/java/cds.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="${SEEDS:-20}"
cargo build --release --quiet
if [ "${TABLE_ONLY:-}" != 1 ]; then
    target/release/redlock-sim matrix scenarios/libraries/matrix.toml \
        --servers node --seeds "1..=$seeds" --jobs 3 --out reports/libraries-node \
        --keep-runs first
fi
target/release/redlock-sim compare reports/libraries-node reports/libraries \
    --out reports/node-vs-redis --names node,redis

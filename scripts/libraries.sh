#!/usr/bin/env bash
# Regenerates the headline library matrix, reports/libraries/: every cell
# of scenarios/libraries/matrix.toml on real redis-server and
# redis-sentinel (`--servers redis`), run until its verdict is settled
# (docs/cli-and-outputs.md, "Seeds where they decide something") within a
# budget of 120 seeds, as 8 shards one after the other into
# reports/libraries-redis/shard-K-of-8/ (three runs at once each), then
# merged into reports/libraries/. A shard that was interrupted resumes
# where it stopped when the script runs again; a finished one is read
# back. About 5 hours on 2 cores (reports/libraries-redis/README.md gives
# each shard's time); run it alone: other work on the machine moves
# timing-sensitive cells. To spread the shards over machines:
# scripts/matrix-shards.sh, or .github/workflows/matrix-shards.yml.
# Needs the drivers (DEPS_ONLY=1 bash scripts/test.sh) and the Java
# drivers' class-data archives (bash drivers/java/cds.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/redlock-sim
shards=()
for k in 1 2 3 4 5 6 7 8; do
    out="reports/libraries-redis/shard-$k-of-8"
    "$bin" matrix scenarios/libraries/matrix.toml --seeds 1..=120 --servers redis \
        --jobs 3 --shard "$k/8" --out "$out" --keep-runs first
    shards+=("$out")
done
rm -rf reports/libraries
"$bin" merge "${shards[@]}" --out reports/libraries

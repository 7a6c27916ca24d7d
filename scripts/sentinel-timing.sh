#!/usr/bin/env bash
# Regenerates reports/sentinel-timing/: how long after the master's crash the
# sentinel fails over, the node's sentinel (`lab --servers node`) beside
# real `redis-sentinel` (`--servers redis`), on tests/data/lab/
# sentinel_timing.toml (one master, two replicas, down-after 1 s, the master
# killed 100 ms after c1 locks it), seeds 1..=N (SEEDS, default 20), one run
# at a time with the built-in client. Writes timing.csv (backend, seed, the
# crash in ms of the run; after it, the promotion the lab records, and from
# each sentinel's log its +sdown and +switch-master; the replica promoted;
# the failovers tried) and README.md (scripts/sentinel_timing.py). About
# 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
out=reports/sentinel-timing
seeds="${SEEDS:-20}"
file=tests/data/lab/sentinel_timing.toml
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for backend in node redis; do
    echo "sentinel-timing: --servers $backend" >&2
    "$bin" lab "$file" --servers "$backend" --seeds "1..=$seeds" --jobs 1 \
        --out "$tmp/$backend" -- "$bin" lab-client >/dev/null || true
done
rm -rf "$out"
mkdir -p "$out"
python3 scripts/sentinel_timing.py "$tmp" "$out" "$seeds"
cat "$out/README.md"

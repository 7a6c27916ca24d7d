#!/usr/bin/env bash
# Regenerates reports/lab-load/: the lab's verdicts against the machine's
# load (issue 41). Runs scenarios/libraries/load.toml (one library per
# language under the failover race, seeds 1..=20 by its file; SEEDS=A..=B
# overrides) twice: at --jobs 2 on a quiet machine (quiet/), then at
# --jobs 6 with two busy loops beside it (loaded/); scripts/lab_load.py
# writes README.md, the two matrices' cells side by side with their 95%
# intervals and whether they overlap. Run it on an otherwise idle machine:
# the quiet half must be quiet. About 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
out=reports/lab-load
file=scenarios/libraries/load.toml
seeds=()
[ -n "${SEEDS:-}" ] && seeds=(--seeds "$SEEDS")
rm -rf "$out"
mkdir -p "$out"
"$bin" matrix "$file" --jobs 2 "${seeds[@]}" --out "$out/quiet" > /dev/null
busy=()
cleanup() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in 1 2; do
    sh -c 'while :; do :; done' &
    busy+=($!)
done
"$bin" matrix "$file" --jobs 6 "${seeds[@]}" --out "$out/loaded" > /dev/null
cleanup
python3 scripts/lab_load.py "$out"
cat "$out/README.md"

#!/usr/bin/env bash
# Regenerates reports/lab-load/: the lab's verdicts against the machine's
# load (issue 41). Runs scenarios/libraries/load.toml (one library per
# language under each fault kind whose timing matters, seeds 1..=20 by its
# file; SEEDS=A..=B overrides) at --jobs 2 on a quiet machine (quiet/),
# then with two busy loops beside it at each --jobs of LOADED_JOBS
# (default "6 3 9": loaded-6/, loaded-3/, loaded-9/); scripts/lab_load.py
# writes README.md, the matrices' cells side by side with their 95%
# intervals and whether each loaded one overlaps the quiet one, and
# notes.md after them (by hand: how the binary of each column's day
# scheduled its runs). A cell already swept
# is read back (the matrix's rule): FRESH=1 runs everything again. Run it
# on an otherwise idle machine: the quiet half must be quiet. About 70
# minutes on 2 cores from nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
out=reports/lab-load
file=scenarios/libraries/load.toml
loaded_jobs="${LOADED_JOBS:-6 3 9}"
seeds=()
[ -n "${SEEDS:-}" ] && seeds=(--seeds "$SEEDS")
[ "${FRESH:-}" = 1 ] && rm -rf "$out"
mkdir -p "$out"
"$bin" matrix "$file" --jobs 2 "${seeds[@]}" --keep-runs first --out "$out/quiet" > /dev/null
busy=()
cleanup() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in 1 2; do
    sh -c 'while :; do :; done' &
    busy+=($!)
done
for j in $loaded_jobs; do
    "$bin" matrix "$file" --jobs "$j" "${seeds[@]}" --keep-runs first --out "$out/loaded-$j" > /dev/null
done
cleanup
python3 scripts/lab_load.py "$out" $loaded_jobs
cat "$out/README.md"

#!/usr/bin/env bash
# The lab's runs per minute on the library matrix's mix, before and after
# the speed work of issue 42, in one run on this machine: writes
# reports/lab-rate/README.md (and prints it).
#
#   bash scripts/lab-rate.sh
#
# "Before" is scenarios/libraries/matrix.toml and its scenario files as
# they were at BEFORE (default 7435f751, the last commit before that work),
# copied into a scratch directory, run by today's binary; "after" is the
# working tree's. Both run every cell of the matrix for SEEDS (default
# 1..=3, each cell's budget, so no cell stops early: the two sides run the
# same runs) at --jobs JOBS_BEFORE (default 3, the matrix's default then)
# and JOBS_AFTER (default 3). The time of each side is the matrix
# command's wall time; the phases of its runs come from each run's
# summary.json (phases_ms). scripts/lab_rate.py compares the two: runs per
# minute and their ratio, where a run's time went per language, and how
# the cells' verdicts agree. Run it on an otherwise idle machine, with the
# drivers built and the Java drivers' CDS archives made
# (drivers/java/cds.sh). About 35 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
before="${BEFORE:-7435f751}"
seeds="${SEEDS:-1..=3}"
out=reports/lab-rate
# WORK keeps the two sides' directories (default: a scratch directory,
# removed at the end); a side whose matrix.csv is there already is not
# run again (its time is read from WORK/times).
if [ -n "${WORK:-}" ]; then
    work="$WORK"
    mkdir -p "$work"
else
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/before" "$out"
# The matrix file at BEFORE, its scenario files copied beside it.
git show "$before:scenarios/libraries/matrix.toml" > "$work/before/matrix.toml"
for f in $(grep -o 'scenarios/libraries/[a-z_-]*\.toml' "$work/before/matrix.toml" | sort -u); do
    git show "$before:$f" > "$work/before/$(basename "$f")"
done
sed -i "s|scenarios/libraries/|$work/before/|" "$work/before/matrix.toml"
side() { # side NAME FILE JOBS
    local start end
    if [ -f "$work/$1/matrix.csv" ] && grep -q "^$1 " "$work/times" 2>/dev/null; then
        return
    fi
    start=$(date +%s.%N)
    "$bin" matrix "$2" --seeds "$seeds" --jobs "$3" --out "$work/$1" > /dev/null
    end=$(date +%s.%N)
    echo "$1 $3 $(echo "$end - $start" | bc)" >> "$work/times"
}
side before "$work/before/matrix.toml" "${JOBS_BEFORE:-3}"
side after scenarios/libraries/matrix.toml "${JOBS_AFTER:-3}"
python3 scripts/lab_rate.py "$work" "$before" "$seeds" > "$out/README.md"
cat "$out/README.md"

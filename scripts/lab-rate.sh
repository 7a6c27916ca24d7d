#!/usr/bin/env bash
# The lab's runs per minute on the library matrix's mix, before and after
# the speed work of issue 42, in one run on this machine: writes
# reports/lab-rate/README.md (and prints it).
#
#   bash scripts/lab-rate.sh
#
# "before": scenarios/libraries/matrix.toml and its scenario files as they
# were at BEFORE (default 7435f751, the last commit before that work),
# copied into a scratch directory, run at --jobs JOBS_BEFORE (default 3,
# the matrix's default then) by the binary of BEFORE_BIN (default
# 640a0a13, the last that ran a matrix's cells one after the other, each
# cell's seeds --jobs at once), built here in a worktree of its own.
# "after": the working tree's matrix file run by today's binary at --jobs
# JOBS_AFTER (default 9: the cells side by side, the JVM libraries
# weighing 2); "after, loaded": the same with two busy loops beside it.
# Every side runs every cell of the matrix for SEEDS (default 1..=3, each
# cell's budget, so no cell stops early: the sides run the same runs).
# The time of each side is the matrix command's wall time; the phases of
# its runs come from each run's summary.json (phases_ms).
# scripts/lab_rate.py compares them: runs per minute and their ratio,
# where a run's time went per language, and how the cells' verdicts agree.
# Run it on an otherwise idle machine, with the drivers built and the Java
# drivers' CDS archives made (drivers/java/cds.sh). About 35 minutes on 2
# cores, and the before binary's build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
before="${BEFORE:-7435f751}"
before_bin="${BEFORE_BIN:-640a0a13}"
seeds="${SEEDS:-1..=3}"
out=reports/lab-rate
# WORK keeps the sides' directories (default: a scratch directory, removed
# at the end); a side whose matrix.csv is there already is not run again
# (its time is read from WORK/times).
if [ -n "${WORK:-}" ]; then
    work="$WORK"
    mkdir -p "$work"
else
    work="$(mktemp -d)"
fi
busy=()
cleanup() {
    for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
    git worktree remove --force "$work/bin-src" 2>/dev/null || true
    [ -n "${WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
# The before binary, from its commit's sources (its target kept in WORK).
if [ ! -x "$work/bin-target/release/redlock-sim" ]; then
    git worktree add --detach --force "$work/bin-src" "$before_bin" > /dev/null
    CARGO_TARGET_DIR="$work/bin-target" cargo build --release --quiet \
        --manifest-path "$work/bin-src/Cargo.toml"
fi
old_bin="$work/bin-target/release/redlock-sim"
mkdir -p "$work/before-file" "$out"
# The matrix file at BEFORE, its scenario files copied beside it.
git show "$before:scenarios/libraries/matrix.toml" > "$work/before-file/matrix.toml"
for f in $(grep -o 'scenarios/libraries/[a-z_-]*\.toml' "$work/before-file/matrix.toml" | sort -u); do
    git show "$before:$f" > "$work/before-file/$(basename "$f")"
done
sed -i "s|scenarios/libraries/|$work/before-file/|" "$work/before-file/matrix.toml"
side() { # side NAME BIN FILE JOBS
    local start end
    if [ -f "$work/$1/matrix.csv" ] && grep -q "^$1 " "$work/times" 2>/dev/null; then
        return
    fi
    start=$(date +%s.%N)
    "$2" matrix "$3" --seeds "$seeds" --jobs "$4" --out "$work/$1" > /dev/null 2> "$work/$1.log"
    end=$(date +%s.%N)
    echo "$1 $4 $(echo "$end - $start" | bc)" >> "$work/times"
}
side before "$old_bin" "$work/before-file/matrix.toml" "${JOBS_BEFORE:-3}"
side after "$bin" scenarios/libraries/matrix.toml "${JOBS_AFTER:-9}"
for _ in 1 2; do
    sh -c 'while :; do :; done' &
    busy+=($!)
done
side loaded "$bin" scenarios/libraries/matrix.toml "${JOBS_AFTER:-9}"
for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
busy=()
python3 scripts/lab_rate.py "$work" "$before" "$before_bin" "$seeds" > "$out/README.md"
cat "$out/README.md"

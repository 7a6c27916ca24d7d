#!/usr/bin/env bash
# A library matrix as N shards run by GNU parallel (Debian's `parallel`),
# then merged: the recipe of docs/lab.md ("Shards").
#
#   bash scripts/matrix-shards.sh FILE N OUT [-- MATRIX_FLAGS...]
#
# runs `redlock-sim matrix FILE --shard K/N --out OUT/shard-K MATRIX_FLAGS`
# for K = 1..N, SHARDS_AT_ONCE at a time (default 1: on one 2-core machine
# one shard at `--jobs 3` already fills it), then `redlock-sim merge
# OUT/shard-* --out OUT/merged`. A shard that was interrupted resumes
# where it stopped when the script runs again (a cell cut short goes on
# after the runs it finished). Build first: `cargo build --release`, then
# `bash drivers/java/cds.sh` (the Java drivers' class-data archives; the
# JVMs start without them, slower). PARALLEL_FLAGS are given to
# parallel as they are: to run the shards on other machines, each with
# this repository built at the same path,
#
#   PARALLEL_FLAGS="--sshloginfile hosts.txt --workdir $PWD --return OUT/shard-{} --cleanup" \
#   SHARDS_AT_ONCE=4 bash scripts/matrix-shards.sh FILE 4 OUT -- --jobs 3
#
# (parallel copies each shard's directory back, then removes it there).
# The exit status is 1 when a shard's gate (`--baseline`) failed, 2 for
# bad input, as `matrix` and `merge` give them.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
    echo "usage: scripts/matrix-shards.sh FILE N OUT [-- MATRIX_FLAGS...]" >&2
    exit 2
fi
file=$1 n=$2 out=$3
shift 3
[ "${1:-}" = -- ] && shift
if ! command -v parallel >/dev/null 2>&1; then
    echo "scripts/matrix-shards.sh: GNU parallel is missing: apt-get install parallel" >&2
    exit 2
fi
bin="${REDLOCK_SIM:-target/release/redlock-sim}"
mkdir -p "$out"
# shellcheck disable=SC2086 # PARALLEL_FLAGS are words for parallel
parallel --will-cite --jobs "${SHARDS_AT_ONCE:-1}" --halt soon,fail=1 ${PARALLEL_FLAGS:-} \
    "$bin" matrix "$file" --shard "{}/$n" --out "$out/shard-{}" "$@" ::: $(seq 1 "$n")
shards=()
for k in $(seq 1 "$n"); do
    shards+=("$out/shard-$k")
done
"$bin" merge "${shards[@]}" --out "$out/merged"

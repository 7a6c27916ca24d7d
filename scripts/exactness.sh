#!/usr/bin/env bash
# Regenerates reports/exactness/: every shipped scenario file (scenarios/,
# scenarios/variants/, scenarios/libraries/, benches/; every combination of
# a file's [sweep]) over seeds 1..=N (SEEDS, default 20), swept twice: once
# stepping every tick (`sweep --every-tick`), once skipping the steps in
# which nothing can happen (the default). Each run's row of runs.csv, its
# trace included, must be the same both ways, wall_ms aside. Writes
# exactness.csv (scenario,runs,identical,every_tick_s,skipping_s: the
# seconds the runs took, summed from wall_ms) and README.md; exits 1 if a
# row differs. Takes about 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
out=reports/exactness
seeds="${SEEDS:-20}"
jobs="${JOBS:-2}"
files=$(ls scenarios/*.toml scenarios/variants/*.toml scenarios/libraries/*.toml benches/*.toml |
    grep -v -e 'libraries/matrix.toml' -e 'libraries/bugs.toml' -e 'libraries/load.toml')
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
"$bin" sweep --every-tick --seeds "1..=$seeds" --jobs "$jobs" --out "$tmp/every" $files > /dev/null
middle=$(date +%s)
"$bin" sweep --seeds "1..=$seeds" --jobs "$jobs" --out "$tmp/skip" $files > /dev/null
end=$(date +%s)
rm -rf "$out"
mkdir -p "$out"
csv="$out/exactness.csv"
echo "scenario,runs,identical,every_tick_s,skipping_s" > "$csv"
# Every column but wall_ms (found by its header), rows sorted (a sweep
# appends them as its workers finish).
# A runs.csv without a wall_ms column is an error, never rows that match.
column='NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_ms") w = i
                  if (!w) { print "no wall_ms column" > "/dev/stderr"; exit 2 }; next }'
rows() { awk -F, "$column"' { $w = ""; print }' OFS=, "$1" | sort; }
wall() { awk -F, "$column"' { s += $w } END { printf "%.1f", s / 1000 }' "$1"; }
differ=0
for dir in "$tmp"/every/*/; do
    name="$(basename "$dir")"
    a="$tmp/every/$name/runs.csv"
    b="$tmp/skip/$name/runs.csv"
    runs=$(rows "$a" | wc -l)
    same=$(comm -12 <(rows "$a") <(rows "$b") | wc -l)
    [ "$same" = "$runs" ] && [ "$(rows "$b" | wc -l)" = "$runs" ] || differ=1
    echo "$name,$runs,$same,$(wall "$a"),$(wall "$b")" >> "$csv"
done
total=$(awk -F, 'NR > 1 { r += $2; s += $3 } END { print r " runs, " s " identical" }' "$csv")
{
    echo "# Event skipping against stepping every tick"
    echo
    echo "Made by \`scripts/exactness.sh\` (SEEDS=$seeds): every shipped scenario file,"
    echo "every combination of its \`[sweep]\`, seeds 1..=$seeds, swept with"
    echo "\`--every-tick\` and without. A run is identical when its whole row of"
    echo "\`runs.csv\` is (verdict, counts, latencies and the trace, a hash of every"
    echo "event of the run), \`wall_ms\` aside."
    echo
    echo "**$total.** Wall time on $(nproc) cores, --jobs $jobs: every tick"
    echo "$((middle - start)) s, skipping $((end - middle)) s."
    echo
    echo "Per scenario (seconds summed over its runs): [exactness.csv](exactness.csv)."
} > "$out/README.md"
cat "$out/README.md"
exit "$differ"

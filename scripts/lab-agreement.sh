#!/usr/bin/env bash
# Regenerates reports/lab-agreement/: the built-in client run by the lab
# (`redlock-sim lab ... -- redlock-sim lab-client`) on the shipped
# scenarios with scripted faults that the lab can express, seeds 1..=N
# (SEEDS, default 3), two runs at once, beside `redlock-sim run`'s verdict
# for the same seeds. Writes agreement.csv (scenario,expect,seed,
# sim_verdict,lab_verdict), each scenario's lab sweep under <name>/, and
# README.md with the table (TABLE_ONLY=1: only README.md, from
# agreement.csv). Takes about 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
out=reports/lab-agreement
seeds="${SEEDS:-3}"
scenarios="failover_race failover_race_early crash_restart_immediate crash_restart_delayed
persistence_always persistence_everysec gc_pause gc_pause_one_write
clock_drift_within_budget clock_drift_beyond_budget clock_jump
partition_held_write partition_held_write_fenced closed_request_lands
closed_request_lands_fenced speedup_stale_write speedup_stale_write_fenced"
csv="$out/agreement.csv"
if [ "${TABLE_ONLY:-}" != 1 ]; then
rm -rf "$out"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "scenario,expect,seed,sim_verdict,lab_verdict" > "$csv"
for name in $scenarios; do
    f="scenarios/$name.toml"
    expect="$(awk -F'"' '/^expect/ {print $2; exit}' "$f")"
    echo "lab-agreement: $name" >&2
    "$bin" lab "$f" --seeds "1..=$seeds" --jobs 2 --out "$out/$name" -- "$bin" lab-client >/dev/null || true
    for s in $(seq 1 "$seeds"); do
        sim="$("$bin" run "$f" --seed "$s" --out "$tmp/$name-$s" | awk '/^verdict:/ {print $2}')"
        lab="$(awk -F, -v s="$s" 'NR > 1 && $2 == s {print $3}' "$out/$name/runs.csv")"
        echo "$name,$expect,$s,$sim,$lab" >> "$csv"
    done
done
fi
{
    echo "# The lab against the simulation: the built-in client"
    echo
    echo "Made by \`bash scripts/lab-agreement.sh\` (seeds 1..=$seeds): each shipped scenario with"
    echo "scripted faults that the lab can express, run by \`redlock-sim run\` and by"
    echo "\`redlock-sim lab ... -- redlock-sim lab-client\` (the same client code on real TCP,"
    echo "the faults on the wall clock, judged from outside). Each scenario's lab runs are"
    echo "under its directory (\`<name>/index.html\`)."
    echo
    echo "| scenario | expect | simulation | lab | agree |"
    echo "|---|---|---|---|---|"
    awk -F, 'NR > 1 {
        sim[$1] = sim[$1] (sim[$1] == "" ? "" : " ") $4
        lab[$1] = lab[$1] (lab[$1] == "" ? "" : " ") $5
        want[$1] = $2
        if ($4 != $5) bad[$1]++
        if (!($1 in seen)) { order[++n] = $1; seen[$1] = 1 }
    } END {
        for (i = 1; i <= n; i++) {
            s = order[i]
            printf "| [%s](<%s/index.html>) | %s | %s | %s | %s |\n", s, s, want[s], sim[s], lab[s], (bad[s] ? "no" : "yes")
        }
    }' "$csv"
    echo
    echo "Where they differ, and why: \`gc_pause\` and \`gc_pause_one_write\` pause c1"
    echo "\`at = \"0s\"\` after \`c1:acquired\`. In the simulation that is the instant c1's lock"
    echo "call returned, between its validity check and its first write, and c1 writes"
    echo "stale after the pause. In the lab, \`acquired\` is the moment the lab sees c1 own"
    echo "the lock on the nodes, a network hop before c1's lock call returns: the SIGSTOP"
    echo "lands inside the lock call, and when c1 runs again 12 s later the Redlock"
    echo "client's elapsed-time check finds no validity left and gives the lock up. The"
    echo "window between the client's check and its first write is a few milliseconds"
    echo "the wall clock cannot aim at from outside the client; a driver's own \`HELD\`"
    echo "comes after that window too. The stale write of a paused client is shown in the"
    echo "lab with a pause longer than the TTL after the first write"
    echo "(\`tests/data/lab/paused_client.toml\`, redis-py's \`Lock\`, which never checks)."
} > "$out/README.md"
cat "$out/README.md"

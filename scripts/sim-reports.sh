#!/usr/bin/env bash
# Regenerates every committed simulation report, from scratch (--fresh):
#   reports/single-vs-quorum/, clock-drift-budget/, variants-campaign/,
#   delayed-restart-guidance/ (and its frontier-cluster.restart/),
#   restart-frontier-backoff/ (and its frontier-cluster.restart/),
#   no-false-alarms/ (every shipped scenario that expects no violation,
#   1,000 seeds each), then reports/exactness/ (scripts/exactness.sh).
# The simulation is deterministic: a run of this script on any machine
# gives the same runs.csv rows (wall_ms aside) and the same summaries.
# About an hour on 2 cores. JOBS sets the threads (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin="$PWD/target/release/redlock-sim"
jobs=(--jobs "${JOBS:-$(nproc)}")

sweep() { # sweep FILE DIR
    "$bin" sweep "$1" --fresh "${jobs[@]}" --out "$2" > /dev/null
    echo "scripts/sim-reports.sh: $2"
}

sweep scenarios/single_vs_quorum.toml reports/single-vs-quorum
sweep scenarios/clock_drift_budget.toml reports/clock-drift-budget
sweep scenarios/variants/campaign.toml reports/variants-campaign
sweep scenarios/delayed_restart_guidance.toml reports/delayed-restart-guidance
sweep scenarios/restart_frontier_backoff.toml reports/restart-frontier-backoff

rm -rf reports/delayed-restart-guidance/frontier-cluster.restart
"$bin" frontier scenarios/delayed_restart_guidance.toml --key cluster.restart \
    --from 0.5ttl --to 1.5ttl --seeds 200 "${jobs[@]}" \
    --out reports/delayed-restart-guidance/frontier-cluster.restart > /dev/null
rm -rf reports/restart-frontier-backoff/frontier-cluster.restart
"$bin" frontier scenarios/restart_frontier_backoff.toml --key cluster.restart \
    --from 0.9ttl --to 1ttl --seeds 100 --resolution 0.003ttl "${jobs[@]}" \
    --out reports/restart-frontier-backoff/frontier-cluster.restart > /dev/null
echo "scripts/sim-reports.sh: the two frontiers"

# Every shipped scenario that expects no violation, 1,000 seeds each.
"$bin" sweep --strict --expect safe --seeds 1..=1000 --fresh "${jobs[@]}" \
    --out reports/no-false-alarms scenarios/*.toml > /dev/null
echo "scripts/sim-reports.sh: reports/no-false-alarms"

bash scripts/exactness.sh

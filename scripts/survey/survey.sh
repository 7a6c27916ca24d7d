#!/usr/bin/env bash
# survey.sh: which Redis commands one lock library sends, on real Redis.
#
# Runs one library (its lab driver command) under `redlock-sim lab
# --servers redis` on the given scenarios and seeds, one lab run at a time,
# and records:
#   - every command the driver sends straight to a node or to the sentinel:
#     all TCP traffic on the loopback interface is captured (tcpdump), and
#     the bytes each client sent to its own link ports (REDLOCK_NODES,
#     REDLOCK_SENTINEL, read from the client's environment by a wrapper that
#     then execs the driver unchanged) are parsed as RESP (tshark);
#   - every command a script runs on a node: a `redis-cli monitor` is
#     attached to each redis-server the lab starts (and again after each
#     restart); the `[0 lua]` lines are the script's calls.
# The store's traffic (REDLOCK_STORE: the lab's WRITE/HELD/... protocol) is
# left out. Then survey_parse.py writes OUT/<slug>.txt:
#   COMMAND [subcommand/options as sent]  <count>  <direct|script|sentinel>
# and OUT/details/<slug>/ (per-run counts, example commands, the scripts).
# The raw captures stay in OUT/runs/<slug>/<scenario>-seed<N>/ (pcaps: large,
# not committed); the same scenario and seed again replaces its run, and
# <slug>.txt is always written from every run there.
#
# Usage (paths relative to the repository root; the script runs from there):
#   bash scripts/survey/survey.sh --slug SLUG [--out DIR] [--seeds "1 2"]
#        [--set KEY=VALUE]... [--bin PATH] SCENARIO.toml [SCENARIO.toml...]
#        -- DRIVER COMMAND...
#   --out   default reports/command-survey
#   --seeds default "1"
#   --set   as `lab --set`, repeatable (the fenced Redisson lock needs
#           --set clients.fencing=true)
#   --bin   default target/release/redlock-sim
# e.g.
#   bash scripts/survey/survey.sh --slug redis-py-lock-8.1.0 --seeds "1 2" \
#     scenarios/libraries/client_paused-single.toml \
#     -- tests/libs/python/.venv/bin/python drivers/python/redis_py_lock.py
# run_all.py calls it for every library of the matrix.
#
# Needs: redlock-sim built, redis-server/redis-sentinel/redis-cli, tcpdump,
# tshark (Debian: apt-get install -y redis-server tcpdump tshark), ss
# (iproute2), python3, and the driver built as the matrix runs it. Root (or
# CAP_NET_RAW) for tcpdump on `lo`. No other lab run on the machine meanwhile
# (its traffic on `lo` would be captured too, and it moves timing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Internal: the wrapper the lab starts as each client. It records the
# client's REDLOCK_* environment, then becomes the driver (same pid, same
# process group, so the lab's pauses and kills reach it as before).
if [[ "${1:-}" == "__wrap" ]]; then
    dir=$2
    shift 2
    env | grep '^REDLOCK_' > "$dir/env-${REDLOCK_CLIENT:-unknown}-$$.txt" || true
    exec "$@"
fi

cd "$here/../.."

slug=""
out="reports/command-survey"
seeds="1"
bin="target/release/redlock-sim"
sets=()
scenarios=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --slug) slug=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        --set) sets+=(--set "$2"); shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --) shift; break ;;
        -*) echo "survey.sh: unknown option $1" >&2; exit 2 ;;
        *) scenarios+=("$1"); shift ;;
    esac
done
if [[ -z "$slug" || ${#scenarios[@]} -eq 0 || $# -eq 0 ]]; then
    sed -n '2,42p' "$here/survey.sh" >&2
    exit 2
fi
driver=("$@")
for tool in tcpdump tshark ss redis-cli redis-server redis-sentinel python3; do
    command -v "$tool" >/dev/null || { echo "survey.sh: $tool not found (apt-get install -y redis-server tcpdump tshark)" >&2; exit 2; }
done
[[ -x "$bin" ]] || { echo "survey.sh: $bin not found (cargo build --release)" >&2; exit 2; }

mkdir -p "$out"
out=$(cd "$out" && pwd) # the wrapper writes into it from the client's directory
runs="$out/runs/$slug"
mkdir -p "$runs"

# Is pid $1 a descendant of pid $2?
descends() {
    local p=$1
    while [[ -n "$p" && "$p" -gt 1 ]]; do
        [[ "$p" == "$2" ]] && return 0
        p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || true)
    done
    return 1
}

# Attach `redis-cli monitor` to every redis-server the lab ($1) starts, for
# as long as it runs, one file per attachment (port-pid-n): again after a
# restart (a new pid) and after the monitor's connection was killed (the
# sentinel's `CLIENT KILL TYPE normal` on a promotion kills it too).
attach_monitors() {
    local lab=$1 dir=$2 pid port key n
    declare -A mon=() count=()
    mkdir -p "$dir/monitor"
    while kill -0 "$lab" 2>/dev/null; do
        for pid in $(pgrep -x redis-server || true); do
            descends "$pid" "$lab" || continue
            # a sentinel (redis-server --sentinel) has no MONITOR
            tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q sentinel && continue
            for port in $(ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | sed 's/.*://' | sort -u); do
                key=$port-$pid
                if [[ -n "${mon[$key]:-}" ]] && kill -0 "${mon[$key]}" 2>/dev/null; then
                    continue
                fi
                n=$(( ${count[$key]:-0} + 1 ))
                count[$key]=$n
                redis-cli -p "$port" monitor > "$dir/monitor/$key-$n.txt" 2>&1 &
                mon[$key]=$!
                echo $! >> "$dir/monitor/pids"
            done
        done
        sleep 0.05
    done
}

for scenario in "${scenarios[@]}"; do
    for seed in $seeds; do
        name=$(basename "$scenario" .toml)-seed$seed
        dir="$runs/$name"
        rm -rf "$dir"
        mkdir -p "$dir"
        echo "== $slug: $scenario seed $seed -> $dir" >&2
        tcpdump -i lo -s 0 -B 65536 -U -Z root -w "$dir/lo.pcap" tcp 2> "$dir/tcpdump.log" &
        dump=$!
        sleep 1 # tcpdump is listening
        "$bin" lab "$scenario" --seed "$seed" --servers redis "${sets[@]}" \
            --out "$dir/lab" -- bash "$here/survey.sh" __wrap "$dir" "${driver[@]}" \
            > "$dir/lab.log" 2>&1 &
        lab=$!
        attach_monitors "$lab" "$dir" &
        watcher=$!
        status=0
        wait "$lab" || status=$?
        wait "$watcher" || true
        sleep 0.3
        if [[ -e "$dir/monitor/pids" ]]; then
            while read -r m; do kill "$m" 2>/dev/null || true; done < "$dir/monitor/pids"
        fi
        kill -INT "$dump" 2>/dev/null || true
        wait "$dump" || true
        echo "lab exit $status" >> "$dir/lab.log"
        grep -h 'dropped by kernel' "$dir/tcpdump.log" >&2 || true
    done
done

python3 "$here/survey_parse.py" --slug "$slug" --runs "$runs" --out "$out"
echo "wrote $out/$slug.txt" >&2

#!/usr/bin/env python3
"""Where a failover race's time goes, from lab sweeps' run directories.

Usage: failover_race_timing.py DIR [DIR...], each DIR a `redlock-sim lab
FILE --seeds A..=B --out DIR` of a failover race (c1 locks, the master is
crashed, the sentinel promotes the replica, c2 locks it). For each run,
the times after c1's acquisition of: the crash, the promotion (the lab's
`sentinel,failover`), c1's release, c2's first key set and its
acquisition (those later than 2 s are of c2's next hold, not the race:
left out); printed per DIR as median and count, with the violating runs.

Made for the Symfony `RedisStore` cell (reports/libraries-redis/README.md):
    redlock-sim lab scenarios/libraries/failover_race-single.toml \\
        --servers node --seeds 1..=20 --jobs 3 --out /tmp/race/node \\
        -- php drivers/php/symfony_lock.php
    (and --servers redis --out /tmp/race/redis), then
    python3 scripts/failover_race_timing.py /tmp/race/node /tmp/race/redis
"""
import csv
import json
import pathlib
import statistics
import sys

EVENTS = {
    "crash": lambda r: r["event"] == "fault" and "what=crash" in r["detail"],
    "promoted": lambda r: r["host"] == "sentinel" and r["event"] == "failover",
    "c1 released": lambda r: r["host"] == "c1" and r["event"] == "released",
    "c2 key set": lambda r: r["event"] == "key_set" and "by=c2" in r["detail"],
    "c2 acquired": lambda r: r["host"] == "c2" and r["event"] == "acquired",
}


def one(run):
    rows = list(csv.DictReader(open(run / "history.csv")))
    start = next((float(r["time_ms"]) for r in rows
                  if r["host"] == "c1" and r["event"] == "acquired"), None)
    if start is None:
        return {}
    out = {}
    for name, pred in EVENTS.items():
        at = next((float(r["time_ms"]) - start for r in rows if pred(r)), None)
        if at is not None and at < 2000:
            out[name] = at
    return out


def main():
    for d in map(pathlib.Path, sys.argv[1:]):
        runs = sorted(d.glob("seed-*"), key=lambda p: int(p.name[5:]))
        times = {name: [] for name in EVENTS}
        gaps, violating = [], 0
        for run in runs:
            t = one(run)
            for name, at in t.items():
                times[name].append(at)
            if "promoted" in t and "c2 key set" in t:
                gaps.append(t["c2 key set"] - t["promoted"])
            summary = json.loads((run / "summary.json").read_text())
            violating += summary.get("verdict") == "violation"
        print(f"{d}: {len(runs)} runs, {violating} violating; ms after c1's acquisition:")
        for name, xs in times.items():
            if xs:
                print(f"  {name}: median {statistics.median(xs):.0f} ({len(xs)} runs)")
        if gaps:
            print(f"  c2's key set after the promotion: median {statistics.median(gaps):.0f}"
                  f" ({len(gaps)} runs)")


main()

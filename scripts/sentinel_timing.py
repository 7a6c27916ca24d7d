#!/usr/bin/env python3
"""reports/sentinel-timing/ from the lab runs scripts/sentinel-timing.sh made.

Usage: sentinel_timing.py RUNS OUT SEEDS, where RUNS/<backend>/seed-N/ are
the lab's run directories (backend `node` and `redis`). For each run: the
crash (history.csv, `lab,fault,what=crash`) and the failover the lab
recorded (`sentinel,failover`: the node's sentinel records it when it
promotes; for real Sentinel the lab records `+switch-master`), in ms of the
run; and, from a real sentinel's own log (servers/sentinel.1.log, its
wall clock), how long before its `+switch-master` it logged `+sdown` of the
master, `+promoted-slave` (from then on `SENTINEL get-master-addr-by-name`
names the new master) and `+failover-end`. Writes timing.csv and
README.md."""
import csv
import pathlib
import re
import statistics
import sys


def wall_ms(line):
    m = re.search(r"(\d\d):(\d\d):(\d\d)\.(\d\d\d)", line)
    h, mi, s, ms = map(int, m.groups())
    return ((h * 60 + mi) * 60 + s) * 1000 + ms


def sentinel_log(run):
    """Milliseconds before +switch-master of each event of the first failover."""
    logs = sorted((run / "servers").glob("sentinel.*.log"))
    if not logs:
        return {}
    lines = logs[0].read_text(errors="replace").splitlines()
    switch = next((wall_ms(l) for l in lines if "+switch-master" in l), None)
    if switch is None:
        return {}
    out = {}
    for name, pattern in [("sdown", "+sdown master"), ("promoted", "+promoted-slave"),
                          ("end", "+failover-end ")]:
        t = next((wall_ms(l) for l in lines if pattern in l), None)
        out[name] = None if t is None else switch - t
    return out


def one(run):
    rows = list(csv.DictReader(open(run / "history.csv")))
    crash = next((float(r["time_ms"]) for r in rows
                  if r["event"] == "fault" and "what=crash" in r["detail"]), None)
    failover = next((float(r["time_ms"]) for r in rows
                     if r["host"] == "sentinel" and r["event"] == "failover"), None)
    return crash, failover, sentinel_log(run)


def stats(xs):
    xs = sorted(xs)
    if not xs:
        return "—", "—", 0
    p90 = xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
    return f"{statistics.median(xs):.0f}", f"{p90:.0f}", len(xs)


def main():
    runs, out, seeds = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
    rows = []
    for backend in ["node", "redis"]:
        for seed in range(1, seeds + 1):
            d = runs / backend / f"seed-{seed}"
            if not (d / "history.csv").exists():
                rows.append([backend, seed, "", "", "", "", ""])
                continue
            crash, failover, log = one(d)
            cell = lambda v: "" if v is None else f"{v:.0f}" if isinstance(v, float) else str(v)
            rows.append([backend, seed, cell(crash), cell(failover),
                         cell(log.get("sdown")), cell(log.get("promoted")), cell(log.get("end"))])
    with open(out / "timing.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "seed", "crash_ms", "failover_ms", "sdown_before_switch_ms",
                    "promoted_before_switch_ms", "end_before_switch_ms"])
        w.writerows(rows)
    lines = ["# The sentinel's failover timing: the node's and real Redis Sentinel's", "",
             "Made by `scripts/sentinel-timing.sh` (SEEDS=%d): `redlock-sim lab` on" % seeds,
             "`tests/data/lab/sentinel_timing.toml` (one master, two replicas, down-after",
             "1 s, the master killed 100 ms after c1 locks it), the built-in client, one",
             "run at a time, with `--servers node` and with `--servers redis`",
             "(`redis-sentinel` %s, quorum 1, failover-timeout 3 s, parallel-syncs 1)." % redis_version(runs),
             "Per run: [timing.csv](timing.csv).", "",
             "| from the crash to | backend | median ms | p90 ms | runs |", "|---|---|---|---|---|"]
    def add(what, backend, xs):
        med, p90, n = stats(xs)
        lines.append(f"| {what} | {backend} | {med} | {p90} | {n} |")
    for backend in ["node", "redis"]:
        mine = [r for r in rows if r[0] == backend and r[2] and r[3]]
        what = ("the failover the lab records (the node's: its promotion)" if backend == "node"
                else "the failover the lab records (`+switch-master`)")
        add(what, backend, [float(r[3]) - float(r[2]) for r in mine])
        if backend == "redis":
            for col, name in [(5, "`+promoted-slave` (get-master-addr-by-name names the new master)"),
                              (4, "`+sdown` of the master")]:
                add(name, backend, [float(r[3]) - float(r[2]) - float(r[col]) for r in mine if r[col]])
    missing = [f"{r[0]} seed {r[1]}" for r in rows if not (r[2] and r[3])]
    lines += ["", "Runs without a crash and a failover recorded: " + (", ".join(missing) or "none") + "."]
    (out / "README.md").write_text("\n".join(lines) + "\n")


def redis_version(runs):
    for log in sorted(runs.glob("redis/seed-*/servers/sentinel.*.log")):
        m = re.search(r"version=([0-9.]+)", log.read_text(errors="replace"))
        if m:
            return m.group(1)
    return "?"


main()

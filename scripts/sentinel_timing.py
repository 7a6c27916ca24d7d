#!/usr/bin/env python3
"""reports/sentinel-timing/ from the lab runs scripts/sentinel-timing.sh made.

Usage: sentinel_timing.py RUNS OUT SEEDS, where RUNS/<backend>/seed-N/ are
the lab's run directories (backend `node` and `redis`). For each run: the
crash (history.csv, `lab,fault,what=crash`) and the failover the lab
recorded (`sentinel,failover`: on both backends the promotion, when
`SENTINEL get-master-addr-by-name` starts naming the new master), in ms of
the run, and the replica promoted; from the sentinel's own log (the
node's: servers/sentinel.log, in ms of the run; redis-sentinel's:
servers/sentinel.1.log, on its wall clock, placed by its +promoted-slave)
the master's +sdown, the +switch-master, and whether the new master was
itself failed over within the run (Sentinel's flapping just after a
switch). Writes timing.csv and README.md."""
import csv
import pathlib
import re
import statistics
import sys

EVENTS = [("sdown", "+sdown master"), ("promoted", "+promoted-slave"),
          ("switch", "+switch-master"), ("tries", "+try-failover")]


def wall_ms(line):
    m = re.search(r"(\d\d):(\d\d):(\d\d)\.(\d\d\d)", line)
    h, mi, s, ms = map(int, m.groups())
    return ((h * 60 + mi) * 60 + s) * 1000 + ms


def sentinel_log(run, promoted_at):
    """Each event's first time, in ms of the run, and the count of failovers tried."""
    node_log = run / "servers" / "sentinel.log"
    if node_log.exists():
        lines = node_log.read_text(errors="replace").splitlines()
        at = lambda l: float(l.split(" ", 1)[0])
    else:
        logs = sorted((run / "servers").glob("sentinel.*.log"))
        if not logs or promoted_at is None:
            return {}
        lines = logs[0].read_text(errors="replace").splitlines()
        promo = next((wall_ms(l) for l in lines if "+promoted-slave" in l), None)
        if promo is None:
            return {}
        at = lambda l: promoted_at + wall_ms(l) - promo
    out = {}
    for name, pattern in EVENTS:
        hits = [at(l) for l in lines if pattern in l]
        out[name] = len(hits) if name == "tries" else (hits[0] if hits else None)
    return out


def one(run):
    rows = list(csv.DictReader(open(run / "history.csv")))
    crash = next((float(r["time_ms"]) for r in rows
                  if r["event"] == "fault" and "what=crash" in r["detail"]), None)
    failover = next(((float(r["time_ms"]), r["detail"]) for r in rows
                     if r["host"] == "sentinel" and r["event"] == "failover"), None)
    at = failover[0] if failover else None
    new = re.search(r"new=(\S+)", failover[1]).group(1) if failover else ""
    return crash, at, new, sentinel_log(run, at)


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
                rows.append([backend, seed] + [""] * 6)
                continue
            crash, failover, new, log = one(d)
            ms = lambda v: "" if v is None or crash is None else f"{v - crash:.0f}"
            rows.append([backend, seed, "" if crash is None else f"{crash:.0f}", ms(failover), new,
                         ms(log.get("sdown")), ms(log.get("switch")), log.get("tries", "")])
    with open(out / "timing.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["backend", "seed", "crash_ms", "promoted_after_crash_ms", "new_master",
                    "sdown_after_crash_ms", "switch_after_crash_ms", "failovers_tried"])
        w.writerows(rows)
    write_readme(runs, out, seeds, rows)


def write_readme(runs, out, seeds, rows):
    lines = ["# The sentinel's failover timing: the node's and real Redis Sentinel's", "",
             "Made by `scripts/sentinel-timing.sh` (SEEDS=%d): `redlock-sim lab` on" % seeds,
             "`tests/data/lab/sentinel_timing.toml` (one master, two replicas, down-after",
             "1 s, the master killed 100 ms after c1 locks it), the built-in client, one",
             "run at a time, with `--servers node` (the node's sentinel, the model of",
             "`sentinel.c` in `crates/node/src/sentinel/`) and with `--servers redis`",
             "(`redis-sentinel` %s, quorum 1, failover-timeout 3 s, parallel-syncs 1)." % redis_version(runs),
             "The lab records the failover at the promotion (`+promoted-slave`: from",
             "then on `SENTINEL get-master-addr-by-name` names the new master) on both.",
             "Per run: [timing.csv](timing.csv).", "",
             "| from the crash to | backend | median ms | p90 ms | runs |", "|---|---|---|---|---|"]
    meds = {}
    for col, what in [(3, "the promotion (the failover the lab records)"),
                      (5, "`+sdown` of the master"), (6, "`+switch-master`")]:
        for backend in ["node", "redis"]:
            xs = [float(r[col]) for r in rows if r[0] == backend and r[col] != ""]
            med, p90, n = stats(xs)
            meds[(col, backend)] = (med, p90)
            lines.append(f"| {what} | {backend} | {med} | {p90} | {n} |")
    lines += ["", "| backend | replica promoted (runs) | runs whose new master was failed over again |",
              "|---|---|---|"]
    for backend in ["node", "redis"]:
        mine = [r for r in rows if r[0] == backend and r[4]]
        chosen = {n: sum(1 for r in mine if r[4] == n) for n in sorted({r[4] for r in mine})}
        again = sum(1 for r in mine if r[7] not in ("", 0, 1))
        shown = ", ".join(f"{n}: {c}" for n, c in chosen.items()) or "—"
        lines.append(f"| {backend} | {shown} | {again} of {len(mine)} |")
    (nm, np), (rm, rp) = meds[(3, "node")], meds[(3, "redis")]
    if "—" not in (nm, np, rm, rp):
        ratio = lambda a, b: f"{100 * (float(a) / float(b) - 1):+.0f}%"
        lines += ["", f"The node's crash-to-promotion against redis-sentinel's: median {ratio(nm, rm)},"
                  f" 90th percentile {ratio(np, rp)}."]
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

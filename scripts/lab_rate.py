#!/usr/bin/env python3
"""reports/lab-rate/README.md from the two matrices scripts/lab-rate.sh ran.

Usage: lab_rate.py WORK BEFORE SEEDS, where WORK/times has a line
`NAME JOBS SECONDS` per side (before, after), and WORK/NAME the side's
matrix directory (matrix.csv, and each run's summary.json under
<library>-<version>/<fault>/seed-N/)."""
import collections
import csv
import json
import pathlib
import re
import sys

PHASES = ["servers", "ready", "scenario", "after_end", "stop", "judging"]


def slug(s):
    return re.sub(r"[^a-z0-9.]+", "-", s.lower()).strip("-")


def cells(side):
    rows = list(csv.DictReader(open(side / "matrix.csv")))
    return {(r["library"], r["version"], r["scenario"]): r for r in rows}


def runs_of(side, row):
    d = side / f"{slug(row['library'])}-{slug(row['version'])}" / slug(row["scenario"])
    for f in sorted(d.glob("seed-*/summary.json")):
        yield json.load(open(f))


def klass(r):
    k, n = int(r["violating_runs"]), int(r["conclusive_runs"])
    if n == 0:
        return "no conclusive run"
    return "every run violated" if k == n else "no run violated" if k == 0 else "mixed"


def phases(side, table):
    """Mean ms of each phase per language, and the runs' count."""
    sums = collections.defaultdict(lambda: [0.0] * (len(PHASES) + 1))
    count = collections.Counter()
    for row in table.values():
        for s in runs_of(side, row):
            p = s.get("phases_ms") or {}
            acc = sums[row["language"]]
            for i, k in enumerate(PHASES):
                acc[i] += p.get(k, 0.0)
            acc[-1] += s["wall_ms"]
            count[row["language"]] += 1
    return {lang: [v / count[lang] for v in acc] for lang, acc in sums.items()}, count


def main():
    work, before_rev, seeds = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    times = {}
    for line in open(work / "times"):
        name, jobs, secs = line.split()
        times[name] = (int(jobs), float(secs))
    sides = {n: cells(work / n) for n in ("before", "after")}
    rate = {}
    out = ["# The lab's runs per minute: before and after", "",
           "Made by `bash scripts/lab-rate.sh` on 2 cores, in one run: every cell of the",
           f"library matrix (`scenarios/libraries/matrix.toml`), seeds {seeds} each, as the",
           f"matrix was at {before_rev} (\"before\") and as it is now (\"after\"), both run",
           "by today's binary on the project's node.", "",
           "| side | --jobs | runs | wall time | runs per minute |", "|---|---|---|---|---|"]
    for n in ("before", "after"):
        runs = sum(int(r["runs"]) for r in sides[n].values())
        jobs, secs = times[n]
        rate[n] = runs / (secs / 60)
        out.append(f"| {n} | {jobs} | {runs} | {secs / 60:.1f} min | {rate[n]:.1f} |")
    out += ["", f"**After / before: {rate['after'] / rate['before']:.2f}x** the runs per minute.", ""]
    out += ["## Where a run's time went, per language", "",
            "Mean ms per run (each run's `phases_ms`): servers up, the clients launched",
            "to the last `READY`, the scenario, after its end until the clients exited,",
            "the stop, the judging; then the whole run.", "",
            "| language | side | runs | " + " | ".join(PHASES) + " | run |",
            "|---|---|---|" + "---|" * (len(PHASES) + 1)]
    ph = {n: phases(work / n, sides[n]) for n in sides}
    for lang in sorted(ph["before"][0]):
        for n in ("before", "after"):
            means, count = ph[n]
            if lang in means:
                vals = " | ".join(f"{v:.0f}" for v in means[lang])
                out.append(f"| {lang} | {n} | {count[lang]} | {vals} |")
    same, moved = 0, []
    for key, b in sides["before"].items():
        a = sides["after"].get(key)
        if a is None:
            continue
        if klass(a) == klass(b):
            same += 1
        else:
            moved.append((key, b, a))
    out += ["", "## The verdicts", "",
            f"{same} of {len(sides['before'])} cells read the same on both sides (every run",
            "violated, none did, or mixed). The cells that moved:", ""]
    if not moved:
        out.append("- none")
    for (lib, ver, fault), b, a in moved:
        out.append(f"- {lib} {ver}, {fault}: before {b['violating_runs']}/{b['conclusive_runs']}, "
                   f"after {a['violating_runs']}/{a['conclusive_runs']}")
    print("\n".join(out))


main()

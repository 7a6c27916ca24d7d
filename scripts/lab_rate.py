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


SIDES = {"before": "before", "after": "after", "loaded": "after, loaded"}


def moved_cells(a, b):
    """Cells of b whose class differs in a, and how many agree."""
    same, moved = 0, []
    for key, x in b.items():
        y = a.get(key)
        if y is None:
            continue
        if klass(x) == klass(y):
            same += 1
        else:
            moved.append((key, x, y))
    return same, moved


def main():
    work, before_rev, before_bin, seeds = pathlib.Path(sys.argv[1]), *sys.argv[2:5]
    times = {}
    for line in open(work / "times"):
        name, jobs, secs = line.split()
        times[name] = (int(jobs), float(secs))
    sides = {n: cells(work / n) for n in SIDES if n in times}
    rate = {}
    out = ["# The lab's runs per minute: before and after", "",
           "Made by `bash scripts/lab-rate.sh` on 2 cores, in one run: every cell of the",
           f"library matrix (`scenarios/libraries/matrix.toml`), seeds {seeds} each, on the",
           "project's node. **before**: the matrix file as it was at",
           f"{before_rev}, run by the binary of {before_bin} (a matrix's cells one after",
           "the other, each cell's seeds `--jobs` at once). **after**: the file and",
           "binary of now (the cells side by side on the `--jobs` slots, the JVM",
           "libraries weighing 2). **after, loaded**: the same with two busy loops",
           "beside it.", "",
           "| side | --jobs | runs | wall time | runs per minute |", "|---|---|---|---|---|"]
    for n in sides:
        runs = sum(int(r["runs"]) for r in sides[n].values())
        jobs, secs = times[n]
        rate[n] = runs / (secs / 60)
        out.append(f"| {SIDES[n]} | {jobs} | {runs} | {secs / 60:.1f} min | {rate[n]:.1f} |")
    out.append("")
    for n in [n for n in sides if n != "before"]:
        out.append(f"**{SIDES[n].capitalize()} / before: {rate[n] / rate['before']:.2f}x** the runs per minute.")
        out.append("")
    out += ["## Where a run's time went, per language", "",
            "Mean ms per run (each run's `phases_ms`): servers up, the clients launched",
            "to the last `READY`, the scenario, after its end until the clients exited,",
            "the stop, the judging; then the whole run.", "",
            "| language | side | runs | " + " | ".join(PHASES) + " | run |",
            "|---|---|---|" + "---|" * (len(PHASES) + 1)]
    ph = {n: phases(work / n, sides[n]) for n in sides}
    for lang in sorted(ph["before"][0]):
        for n in sides:
            means, count = ph[n]
            if lang in means:
                vals = " | ".join(f"{v:.0f}" for v in means[lang])
                out.append(f"| {lang} | {SIDES[n]} | {count[lang]} | {vals} |")
    out += ["", "## The verdicts", "",
            "A cell reads the same on two sides when its runs fall in the same class",
            "on both: every run violated, none did, or mixed. On 3 seeds a cell whose",
            "rate is between about 10% and 90% changes class by chance alone.", ""]
    for n in [n for n in sides if n != "before"]:
        same, moved = moved_cells(sides["before"], sides[n])
        out += [f"**{SIDES[n].capitalize()}**: {same} of {len(sides[n])} cells read as before. "
                "The cells that moved:", ""]
        if not moved:
            out.append("- none")
        for (lib, ver, fault), a, b in moved:
            out.append(f"- {lib} {ver}, {fault}: before {b['violating_runs']}/{b['conclusive_runs']}, "
                       f"{SIDES[n]} {a['violating_runs']}/{a['conclusive_runs']}")
        out.append("")
    print("\n".join(out).rstrip())


main()

#!/usr/bin/env python3
"""reports/lab-load/README.md from the matrices scripts/lab-load.sh made.

Usage: lab_load.py OUT J..., where OUT/quiet/matrix.csv is the matrix at
--jobs 2 on a quiet machine and OUT/loaded-J/matrix.csv the same at --jobs J
with two busy loops beside it. Each cell: violating of conclusive runs and
the 95% Wilson interval (matrix.csv's), inconclusive runs, and whether each
loaded interval overlaps the quiet one; then OUT/notes.md, if there is one."""
import csv
import pathlib
import sys


def cells(path):
    return {(r["library"], r["version"], r["scenario"]): r for r in csv.DictReader(open(path))}


def shown(r):
    k, n = int(r["violating_runs"]), int(r["conclusive_runs"])
    if n == 0:
        return "no conclusive run"
    lo, hi = float(r["ci_low"]), float(r["ci_high"])
    inconclusive = int(r["runs"]) - n
    note = f", {inconclusive} inconclusive" if inconclusive else ""
    return f"{k}/{n} ({100 * lo:.0f}–{100 * hi:.0f}%){note}"


def overlap(a, b):
    if int(a["conclusive_runs"]) == 0 or int(b["conclusive_runs"]) == 0:
        return False
    return float(a["ci_low"]) <= float(b["ci_high"]) and float(b["ci_low"]) <= float(a["ci_high"])


def main():
    out, jobs = pathlib.Path(sys.argv[1]), sys.argv[2:]
    quiet = cells(out / "quiet" / "matrix.csv")
    loaded = {j: cells(out / f"loaded-{j}" / "matrix.csv") for j in jobs}
    head = " | ".join(f"loaded, --jobs {j} + 2 busy loops | overlaps" for j in jobs)
    lines = ["# The lab's verdicts against the machine's load", "",
             "Made by `bash scripts/lab-load.sh`: `scenarios/libraries/load.toml`",
             "(one library per language under each fault kind whose timing",
             "matters) at `--jobs 2` on a quiet machine, and with two busy loops",
             f"beside it at `--jobs {'`, `--jobs '.join(jobs)}`, on 2 cores. Each cell: violating",
             "of conclusive runs, with its 95% Wilson interval; runs inconclusive",
             "apart. The run's clock starts when the last client says `READY` (the",
             "ready barrier).", "",
             f"| library | language | fault | quiet, --jobs 2 | {head} |",
             "|---|---|---|---|" + "---|---|" * len(jobs)]
    apart = {j: [] for j in jobs}
    for key in sorted(quiet, key=lambda k: (quiet[k]["language"], k)):
        q = quiet[key]
        row = [f"{key[0]} {key[1]}", q["language"], key[2], shown(q)]
        for j in jobs:
            l = loaded[j].get(key)
            if l is None:
                row += ["not run", ""]
                continue
            ok = overlap(q, l)
            if not ok:
                apart[j].append(f"{key[0]} under {key[2]}")
            row += [shown(l), "yes" if ok else "**no**"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for j in jobs:
        names = "; ".join(apart[j]) if apart[j] else "none"
        lines.append(f"Cells whose interval at `--jobs {j}` loaded does not overlap the quiet one: "
                     f"{len(apart[j])} ({names}).")
        lines.append("")
    # What a column's numbers cannot say (how the binary of its day
    # scheduled its runs), kept by hand beside them.
    notes = out / "notes.md"
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    (out / "README.md").write_text("\n".join(lines))


main()

#!/usr/bin/env python3
"""reports/lab-load/README.md from the two matrices scripts/lab-load.sh made.

Usage: lab_load.py OUT, where OUT/quiet/matrix.csv and OUT/loaded/matrix.csv
are the same matrix at --jobs 2 on a quiet machine and at --jobs 6 with two
busy loops beside it. Each cell: violating of conclusive runs and the 95%
Wilson interval (matrix.csv's), inconclusive runs, and whether the two
intervals overlap."""
import csv
import pathlib
import sys


def cells(path):
    return {(r["library"], r["version"], r["scenario"]): r for r in csv.DictReader(open(path))}


def shown(r):
    k, n = int(r["violating_runs"]), int(r["conclusive_runs"])
    lo, hi = float(r["ci_low"]), float(r["ci_high"])
    return f"{k}/{n} ({100 * lo:.0f}–{100 * hi:.0f}%)", int(r["runs"]) - n


def main():
    out = pathlib.Path(sys.argv[1])
    quiet, loaded = cells(out / "quiet" / "matrix.csv"), cells(out / "loaded" / "matrix.csv")
    lines = ["# The lab's verdicts against the machine's load", "",
             "Made by `bash scripts/lab-load.sh`: `scenarios/libraries/load.toml`",
             "(one single-instance library per language under the failover race)",
             "at `--jobs 2` on a quiet machine and at `--jobs 6` with two busy loops",
             "beside it, on 2 cores. Each cell: violating of conclusive runs, with",
             "its 95% Wilson interval; runs inconclusive apart. The run's clock",
             "starts when the last client says `READY` (the ready barrier).", "",
             "| library | language | fault | quiet, --jobs 2 | loaded, --jobs 6 + 2 busy loops | intervals overlap |",
             "|---|---|---|---|---|---|"]
    apart = 0
    for key in sorted(quiet, key=lambda k: (quiet[k]["language"], k)):
        if key not in loaded:
            continue
        q, l = quiet[key], loaded[key]
        (qs, qi), (ls, li) = shown(q), shown(l)
        overlap = float(q["ci_low"]) <= float(l["ci_high"]) and float(l["ci_low"]) <= float(q["ci_high"])
        apart += not overlap
        note = lambda i: f", {i} inconclusive" if i else ""
        lines.append(f"| {key[0]} {key[1]} | {q['language']} | {key[2]} | {qs}{note(qi)} | {ls}{note(li)} | {'yes' if overlap else '**no**'} |")
    lines += ["", f"Cells whose intervals do not overlap: {apart}."]
    (out / "README.md").write_text("\n".join(lines) + "\n")


main()

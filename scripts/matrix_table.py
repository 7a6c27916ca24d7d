#!/usr/bin/env python3
"""The library matrix's table for docs/reports.md and the README: one row a
library, one column a fault, each cell the real-Redis matrix's violating /
conclusive runs with the node's beside it in parentheses, in bold where
their 95% intervals do not overlap.

    python3 scripts/matrix_table.py [REDIS_DIR [NODE_DIR]]

(default reports/libraries and reports/libraries-node). It reads the two
`matrix.csv` files only; the figures are the matrices' own, each on all of
its runs (`redlock-sim compare` compares them on the seeds both ran).
Then it prints the counts the docs quote: cells, runs, how they stopped.
"""
import csv
import sys

FAULTS = [
    "failover race",
    "restart, immediate",
    "restart, delayed",
    "holder paused",
    "clock jump",
    "partitions",
]


def read(path):
    with open(f"{path}/matrix.csv", newline="") as f:
        return {(r["library"], r["version"], r["scenario"]): r for r in csv.DictReader(f)}


def figure(r):
    if r is None:
        return None
    inconclusive = int(r["runs"]) - int(r["conclusive_runs"])
    if int(r["conclusive_runs"]) == 0:
        return f"n/a: {inconclusive} inconclusive"
    text = f"{r['violating_runs']}/{r['conclusive_runs']}"
    if inconclusive:
        text += f", {inconclusive} inconclusive"
    return text


def overlap(a, b):
    if int(a["conclusive_runs"]) == 0 or int(b["conclusive_runs"]) == 0:
        return True
    return float(a["ci_low"]) <= float(b["ci_high"]) and float(b["ci_low"]) <= float(a["ci_high"])


def main():
    redis_dir = sys.argv[1] if len(sys.argv) > 1 else "reports/libraries"
    node_dir = sys.argv[2] if len(sys.argv) > 2 else "reports/libraries-node"
    redis, node = read(redis_dir), read(node_dir)
    libraries = []
    for (lib, ver, _), r in redis.items():
        if (lib, ver, r["language"]) not in libraries:
            libraries.append((lib, ver, r["language"]))
    print("| library | " + " | ".join(FAULTS) + " |")
    print("|---" * (len(FAULTS) + 1) + "|")
    for lib, ver, lang in libraries:
        cells = []
        for fault in FAULTS:
            r, n = redis.get((lib, ver, fault)), node.get((lib, ver, fault))
            if r is None:
                cells.append("")
                continue
            text = figure(r)
            if n is not None:
                text += f" ({figure(n)})"
                if not overlap(r, n):
                    text = f"**{text}**"
            cells.append(text)
        print(f"| {lib} {ver} ({lang}) | " + " | ".join(cells) + " |")
    rows = list(redis.values())
    runs = sum(int(r["runs"]) for r in rows)
    conclusive = sum(int(r["conclusive_runs"]) for r in rows)
    print()
    print(f"cells: {len(rows)}, runs: {runs:,} ({conclusive:,} conclusive)")
    for why in ["violating", "safe", "budget"]:
        held = [r for r in rows if r["stopped"] == why]
        print(f"stopped {why}: {len(held)} cells, {sum(int(r['runs']) for r in held):,} runs")
    safe = [r for r in rows if int(r["violating_runs"]) == 0 and int(r["conclusive_runs"]) > 0]
    worst = max((float(r["ci_high"]) for r in safe), default=0.0)
    print(f"cells with no violation: {len(safe)}, their highest upper bound {worst:.4f}")
    apart = [
        f"{r['library']} {r['version']} under {r['scenario']}"
        for k, r in redis.items()
        if k in node and not overlap(r, node[k])
    ]
    print(f"intervals apart from the node's: {len(apart)}: " + "; ".join(apart))


if __name__ == "__main__":
    main()

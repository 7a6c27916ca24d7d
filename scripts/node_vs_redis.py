#!/usr/bin/env python3
"""reports/node-vs-redis/: the library matrix on both backends, side by side.

Reads every cell of the node's matrix (reports/libraries/, `--servers node`)
and of the real-Redis one (reports/node-vs-redis/redis/, `--servers redis`),
keeps the seeds both ran (the same seeds: the seed fixes the plan of faults),
and writes agreement.csv and README.md: each cell's violation rate on each
backend with its 95% Wilson interval, how its runs broke (runs with a lock
overlap, with a stale write in flight, sent late, in an overlap), and whether
the intervals overlap. README.md ends with reports/node-vs-redis/notes.md,
the explanation of every cell whose intervals do not overlap (written by
hand, from the histories).
"""
import csv
import math
import os
import sys

NODE = "reports/libraries"
REDIS = "reports/node-vs-redis/redis"
OUT = "reports/node-vs-redis"


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def rows(path):
    with open(path, newline="") as f:
        return {int(r["seed"]): r for r in csv.DictReader(f)}


def cells(matrix_csv):
    with open(matrix_csv, newline="") as f:
        return [r for r in csv.DictReader(f)]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def broke(runs):
    n = lambda key: sum(1 for r in runs if int(r[key] or 0) > 0)
    return {
        "overlap": n("lock_overlaps"),
        "in_flight": n("stale_in_flight"),
        "sent_late": n("stale_sent_late"),
        "in_overlap": n("stale_in_overlap"),
    }


def main():
    table = []
    for cell in cells(os.path.join(REDIS, "matrix.csv")):
        lib_dir = cell_dir(cell)
        paths = [os.path.join(d, lib_dir, "runs.csv") for d in (NODE, REDIS)]
        if not all(os.path.exists(p) for p in paths):
            continue
        node_runs, redis_runs = rows(paths[0]), rows(paths[1])
        seeds = sorted(set(node_runs) & set(redis_runs))
        if not seeds:
            continue
        nr = [node_runs[s] for s in seeds]
        rr = [redis_runs[s] for s in seeds]
        kn = sum(1 for r in nr if r["verdict"] == "violation")
        kr = sum(1 for r in rr if r["verdict"] == "violation")
        (nlo, nhi), (rlo, rhi) = wilson(kn, len(seeds)), wilson(kr, len(seeds))
        agree = not (nhi < rlo or rhi < nlo)
        table.append({
            "library": cell["library"],
            "version": cell["version"],
            "language": cell["language"],
            "fault": cell["scenario"],
            "seeds": f"{seeds[0]}..={seeds[-1]}",
            "runs": len(seeds),
            "node_violating": kn,
            "node_ci_low": f"{nlo:.3f}",
            "node_ci_high": f"{nhi:.3f}",
            "redis_violating": kr,
            "redis_ci_low": f"{rlo:.3f}",
            "redis_ci_high": f"{rhi:.3f}",
            "intervals_overlap": "yes" if agree else "no",
            **{f"node_{k}": v for k, v in broke(nr).items()},
            **{f"redis_{k}": v for k, v in broke(rr).items()},
            "node_wall_ms_median": f"{median([float(r['wall_ms']) for r in nr]):.0f}",
            "redis_wall_ms_median": f"{median([float(r['wall_ms']) for r in rr]):.0f}",
        })
    with open(os.path.join(OUT, "agreement.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)
    write_readme(table)


def slug(s):
    """A directory name as redlock-sim makes it: lowercase letters, digits
    and dots, the rest one `-` (crates/harness/src/sweep/matrix.rs)."""
    out = ""
    for c in s:
        if (c.isascii() and c.isalnum()) or c == ".":
            out += c.lower()
        elif not out.endswith("-"):
            out += "-"
    return out.strip("-")


def cell_dir(cell):
    """The cell's directory under a matrix's output."""
    return os.path.join(slug(f"{cell['library']} {cell['version']}"), slug(cell["scenario"]))


def cost(table, backend):
    return f"{median([float(t[backend + '_wall_ms_median']) for t in table]) / 1000:.2f}"


def write_readme(table):
    n = len(table)
    agree = sum(1 for t in table if t["intervals_overlap"] == "yes")
    runs = sum(t["runs"] for t in table)
    lines = [
        "# The library matrix on the node and on real Redis",
        "",
        "Regenerate: `bash scripts/node-vs-redis.sh` (the real-Redis matrix, then",
        "this page; `TABLE_ONLY=1` rewrites only this page and agreement.csv).",
        "",
        f"Every cell of the library matrix (`scenarios/libraries/matrix.toml`), run by",
        f"`redlock-sim lab` on the project's node (`--servers node`: the committed",
        f"`reports/libraries/`) and on real `redis-server` 7.0.15 and `redis-sentinel`",
        f"(`--servers redis`: `redis/` here), on the same seeds: {n} cells, {runs} runs on",
        f"each backend. Violating runs of each, with the 95% Wilson interval of the",
        f"rate; how they broke (runs with a lock overlap / a stale write in flight /",
        f"sent late / in an overlap). **The intervals overlap in {agree} of {n} cells.**",
        "",
        f"What a run costs (the median over cells of each cell's median `wall_ms`, the",
        f"run from the lab's start to its report, servers started and stopped included):",
        f"{cost(table, 'node')} s on the node, {cost(table, 'redis')} s on real Redis.",
        "",
        "| library | fault | node | node 95% | redis | redis 95% | overlap | node broke (ov/fl/late/in) | redis broke (ov/fl/late/in) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in table:
        how = lambda p: "/".join(str(t[f"{p}_{k}"]) for k in ("overlap", "in_flight", "sent_late", "in_overlap"))
        mark = "" if t["intervals_overlap"] == "yes" else " **no**"
        lines.append(
            f"| {t['library']} {t['version']} | {t['fault']} | {t['node_violating']}/{t['runs']} "
            f"| {t['node_ci_low']}–{t['node_ci_high']} | {t['redis_violating']}/{t['runs']} "
            f"| {t['redis_ci_low']}–{t['redis_ci_high']} |{mark or ' yes'} | {how('node')} | {how('redis')} |"
        )
    notes = os.path.join(OUT, "notes.md")
    if os.path.exists(notes):
        lines += ["", open(notes).read().rstrip()]
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())

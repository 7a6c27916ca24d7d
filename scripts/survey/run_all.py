#!/usr/bin/env python3
"""Run survey.sh for every library of scenarios/libraries/matrix.toml and
bugs.toml, one lab run at a time (from the repository root, as root).

    python3 scripts/survey/run_all.py                     # all of them
    python3 scripts/survey/run_all.py --dry-run           # the survey.sh calls it would make
    python3 scripts/survey/run_all.py --only redsync-4.18.1 [SLUG...]
    python3 scripts/survey/run_all.py --out DIR --bin PATH

Writes reports/command-survey/<slug>.txt, details/<slug>/ and runs/<slug>/
(the raw captures, not committed), as survey.sh does. The slug is the
library's name and version in lowercase, runs of other characters than
letters, digits and `.` as one `-`. The committed survey (33 libraries,
122 lab runs of 5 to 17 s each) took about 30 minutes on 2 cores.

Scenarios, by kind (seed 1 each, and seed 2 too where a holder is paused,
so that renewals, extensions and checks happen more than once):
  single:  failover_race-single (the sentinel), restart_immediate-single,
           client_paused-single (seeds 1 2), partitions-single
  redlock: restart_immediate-redlock, partitions-redlock,
           client_paused-redlock (seeds 1 2)
  bugs.toml: each version on its own faults' scenarios (seed 1; redsync:
           every redsync fault), and a single one also on
           failover_race-single (its sentinel path). A library in both files
           (ShedLock) gets one list: its runs accumulate in runs/<slug>/.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIB = "scenarios/libraries/"
PLAN = {
    "single": [("failover_race-single", "1"), ("restart_immediate-single", "1"),
               ("client_paused-single", "1 2"), ("partitions-single", "1")],
    "redlock": [("restart_immediate-redlock", "1"), ("partitions-redlock", "1"),
                ("client_paused-redlock", "1 2")],
}


# The PHP drivers were surveyed (by their engineers, with survey.sh) under
# shorter slugs before their matrix names were settled: kept, so that a new
# run lands beside the committed list.
AS_SURVEYED = {
    "symfony-lock-redisstore-5.4.53": "symfony-lock-5.4.53",
    "symfony-lock-combinedstore-consensusstrategy-5.4.53": "symfony-lock-combined-5.4.53",
}


def slug(lib):
    s = "%s %s" % (lib["name"], lib["version"])
    s = s.lower().replace("'", "")
    s = re.sub(r"[^a-z0-9.]+", "-", s).strip("-")
    return AS_SURVEYED.get(s, s)


def plans():
    out = []
    matrix = tomllib.load(open(LIB + "matrix.toml", "rb"))
    for lib in matrix["library"]:
        for scen, seeds in PLAN[lib["kind"]]:
            out.append((slug(lib), lib, [LIB + scen + ".toml"], seeds))
    bugs = tomllib.load(open(LIB + "bugs.toml", "rb"))
    faults = {f["name"]: f for f in bugs["fault"]}
    for lib in bugs["library"]:
        if "faults" in lib:
            files = [faults[f][lib["kind"]] for f in lib["faults"]]
        else:  # redsync: every fault of its kind
            files = [f[lib["kind"]] for f in bugs["fault"] if lib["kind"] in f]
        if lib["kind"] == "single":
            files.append(LIB + "failover_race-single.toml")
        out.append((slug(lib), lib, files, "1"))
    return out


def main():
    ap = argparse.ArgumentParser(description="survey.sh for every library of the matrix and of bugs.toml")
    ap.add_argument("--only", nargs="*", help="these slugs only")
    ap.add_argument("--dry-run", action="store_true", help="print the survey.sh calls, run nothing")
    ap.add_argument("--out", default="reports/command-survey", help="default: %(default)s")
    ap.add_argument("--bin", default="target/release/redlock-sim", help="default: %(default)s")
    a = ap.parse_args()
    os.chdir(ROOT)
    for s, lib, files, seeds in plans():
        if a.only and s not in a.only:
            continue
        cmd = ["bash", "scripts/survey/survey.sh", "--slug", s, "--out", a.out, "--bin", a.bin, "--seeds", seeds]
        for kv in lib.get("set", []):
            cmd += ["--set", kv]
        cmd += files + ["--"] + lib["command"]
        print(shlex.join(cmd), flush=True)
        if not a.dry_run:
            subprocess.run(cmd, check=False)


if __name__ == "__main__":
    main()

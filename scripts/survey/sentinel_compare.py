#!/usr/bin/env python3
"""The lab's sentinel (the node code's, `lab --servers node`) against
redis-sentinel 7.0.15 (`lab --servers redis`), for what the lock libraries
send to the sentinel.

    python3 scripts/survey/sentinel_compare.py              # from the repository root
    python3 scripts/survey/sentinel_compare.py REDIS_OUT/c1.txt NODE_OUT/c1.txt

Without arguments it runs sentinel_probe.py as the client of
sentinel_probe.toml twice, one lab run at a time (20 s each; --servers node,
then --servers redis; --bin, default target/release/redlock-sim), and
writes into --out (default reports/command-survey/compare/):
sentinel-probe-node.txt and sentinel-probe-redis.txt (the raw replies) and
lab-sentinel-vs-redis-sentinel.txt (the comparison). Needs redis-server and
redis-sentinel (Debian: apt-get install -y redis-server). With two probe
outputs it prints their comparison.

A reply is compared after decoding: `HELLO`'s `id`, and the fields of a
`SENTINEL MASTERS|SLAVES` entry that are run ids or times in ms (runid,
last-*, info-refresh, role-reported-time, master-link-down-time, ...) are
left out; for the other fields, what differs is listed. Entries of a list
(SENTINEL SLAVES) are matched by their `name`.
"""
import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

VOLATILE = {"id", "runid", "last-ping-sent", "last-ok-ping-reply", "last-ping-reply",
            "info-refresh", "role-reported-time", "master-link-down-time",
            "slave-repl-offset", "replica-announced", "s-down-time", "down-after-period"}


def parse(buf, i=0):
    """(value, next index) of one RESP2/RESP3 reply in bytes."""
    t = buf[i:i + 1]
    j = buf.index(b"\r\n", i)
    rest = buf[i + 1:j]
    i = j + 2
    if t in (b"+", b"-", b":", b",", b"_", b"#", b"("):
        return (t.decode() + rest.decode()), i
    if t in (b"$", b"=", b"!"):
        n = int(rest)
        if n < 0:
            return None, i
        return buf[i:i + n].decode("utf-8", "replace"), i + n + 2
    if t in (b"*", b"~", b">"):
        n = int(rest)
        out = []
        for _ in range(max(n, 0)):
            v, i = parse(buf, i)
            out.append(v)
        return (out if n >= 0 else None), i
    if t == b"%":
        n = int(rest)
        out = []
        for _ in range(n * 2):
            v, i = parse(buf, i)
            out.append(v)
        return {"__map__": out}, i
    raise ValueError("unknown reply type %r" % t)


def replies(raw):
    out, i = [], 0
    while i < len(raw):
        if raw[i:i + 1] == b"(":  # a probe note: "(timed out)"
            out.append(raw[i:].decode())
            break
        v, i = parse(raw, i)
        out.append(v)
    return out


def fields(v):
    """A flat field list (RESP2 array or RESP3 map) as a dict, or None."""
    if isinstance(v, dict):
        v = v["__map__"]
    if isinstance(v, list) and len(v) % 2 == 0 and v and all(isinstance(x, str) for x in v[::2]):
        return dict(zip(v[::2], v[1::2]))
    return None


def diff(r, n, path=""):
    """Differences between two decoded replies, volatile fields left out."""
    fr, fn = fields(r), fields(n)
    if fr is not None and fn is not None:
        out = []
        for k in sorted(set(fr) | set(fn)):
            if k in VOLATILE:
                continue
            if k not in fn:
                out.append("%s%s: node lacks it (redis-sentinel %r)" % (path, k, fr[k]))
            elif k not in fr:
                out.append("%s%s: only the node has it (%r)" % (path, k, fn[k]))
            elif fr[k] != fn[k]:
                out.append("%s%s: redis-sentinel %r, node %r" % (path, k, fr[k], fn[k]))
        if isinstance(r, dict) != isinstance(n, dict):
            out.append("%sreply type: redis-sentinel %s, node %s" % (
                path, "map" if isinstance(r, dict) else "array", "map" if isinstance(n, dict) else "array"))
        return out
    if isinstance(r, list) and isinstance(n, list):
        out = []
        fr_list = [fields(x) for x in r]
        fn_list = [fields(x) for x in n]
        if r and n and all(f and "name" in f for f in fr_list + fn_list):
            # entries (SENTINEL SLAVES, MASTERS) matched by name
            by_name = {f["name"]: x for f, x in zip(fn_list, n)}
            for f, x in zip(fr_list, r):
                if f["name"] in by_name:
                    out += diff(x, by_name.pop(f["name"]), "%s[%s]." % (path, f["name"]))
                else:
                    out.append("%s[%s]: node lacks this entry (flags %r)" % (path, f["name"], f.get("flags")))
            for name in by_name:
                out.append("%s[%s]: only the node has this entry" % (path, name))
            return out
        if len(r) != len(n):
            out.append("%sentries: redis-sentinel %d, node %d" % (path, len(r), len(n)))
        for i, (a, b) in enumerate(zip(r, n)):
            out += diff(a, b, "%s[%d]." % (path, i))
        return out
    return [] if r == n else ["%sredis-sentinel %r, node %r" % (path, r, n)]


def load(path):
    cases, order, cur = {}, [], None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("## "):
            cur = line[3:]
            cases[cur] = []
            order.append(cur)
        elif line.startswith("> "):
            cases[cur].append([line[2:], None])
        elif line.startswith("  "):
            cases[cur][-1][1] = ast.literal_eval(line.strip())
    return cases, order


def compare(redis_path, node_path):
    """The comparison's lines, and how many cases differ."""
    r, order = load(redis_path)
    n, _ = load(node_path)
    lines, differ = [], 0
    for name in order:
        out = []
        for i, (cmd, raw) in enumerate(r[name]):
            if name not in n or i >= len(n[name]):
                out.append("> %s: no answer recorded from the node's sentinel" % cmd)
                continue
            d = diff(replies(raw), replies(n[name][i][1]))
            if d:
                out.append("> %s" % cmd)
                out += ["    " + x for x in d]
        differ += bool(out)
        lines.append("## %s: %s" % (name, "DIFFERENT" if out else "same"))
        lines += ["  " + line for line in out]
    lines.append("")
    lines.append("%d cases the same, %d different" % (len(order) - differ, differ))
    return lines


def probe(bin_path, servers, work):
    """Runs the probe in a lab run on `servers`; the path of its output."""
    out = os.path.join(work, servers)
    env = dict(os.environ, SENTINEL_PROBE_OUT=out)
    cmd = [bin_path, "lab", os.path.join(HERE, "sentinel_probe.toml"), "--servers", servers,
           "--out", os.path.join(out, "lab"), "--", sys.executable, os.path.join(HERE, "sentinel_probe.py")]
    print("lab --servers %s (20 s)" % servers, flush=True)
    res = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    path = os.path.join(out, "c1.txt")
    if not os.path.exists(path):
        sys.exit("the probe wrote nothing under --servers %s (lab exit %d):\n%s" % (
            servers, res.returncode, res.stdout[-2000:]))
    return path


def main():
    ap = argparse.ArgumentParser(description="the lab's sentinel against redis-sentinel")
    ap.add_argument("files", nargs="*", help="REDIS_OUT/c1.txt NODE_OUT/c1.txt: compare these only")
    ap.add_argument("--bin", default="target/release/redlock-sim", help="default: %(default)s")
    ap.add_argument("--out", default="reports/command-survey/compare", help="default: %(default)s")
    a = ap.parse_args()
    if a.files:
        if len(a.files) != 2:
            sys.exit("two files: redis-sentinel's probe output, then the node's")
        print("\n".join(compare(*a.files)))
        return
    os.chdir(ROOT)
    if not os.access(a.bin, os.X_OK):
        sys.exit("%s not found (cargo build --release)" % a.bin)
    work = tempfile.mkdtemp(prefix="sentinel-probe-")
    try:
        node = probe(a.bin, "node", work)
        redis = probe(a.bin, "redis", work)
        os.makedirs(a.out, exist_ok=True)
        shutil.copy(node, os.path.join(a.out, "sentinel-probe-node.txt"))
        shutil.copy(redis, os.path.join(a.out, "sentinel-probe-redis.txt"))
        lines = compare(redis, node)
        path = os.path.join(a.out, "lab-sentinel-vs-redis-sentinel.txt")
        open(path, "w").write("\n".join(lines) + "\n")
        print("%s: %s" % (path, lines[-1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

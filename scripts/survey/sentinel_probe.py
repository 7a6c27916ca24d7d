#!/usr/bin/env python3
"""A lab "driver" that asks the sentinel what the lock libraries ask it, and
writes the raw replies, so that the lab's two sentinels can be compared:
the node code's (`--servers node`) and a real redis-sentinel (`--servers
redis`). sentinel_compare.py runs it under both and compares; by hand (from
the repository root):

    SENTINEL_PROBE_OUT=/tmp/probe-node target/release/redlock-sim lab \
        scripts/survey/sentinel_probe.toml --servers node --out /tmp/probe-node/lab \
        -- python3 scripts/survey/sentinel_probe.py
    (the same with --servers redis and another SENTINEL_PROBE_OUT)
    python3 scripts/survey/sentinel_compare.py /tmp/probe-redis/c1.txt /tmp/probe-node/c1.txt

Cases: sentinel_cases.txt beside it (compare.py's format; `$MASTER` is the
master's name), or SENTINEL_PROBE_CASES. Each case on a connection of its
own; after a (P)(UN)SUBSCRIBE, one confirmation per further channel is read.
The client's own link ports in replies are written as n1/n2 (`<n1_>`, as
long as the port: a bulk string's length holds), so that the two runs
compare.
"""
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Conn, load_cases  # noqa: E402

env = os.environ
out_dir = env["SENTINEL_PROBE_OUT"]
os.makedirs(out_dir, exist_ok=True)
host, port = env["REDLOCK_SENTINEL"].rsplit(":", 1)
master = env["REDLOCK_MASTER_NAME"]
names = {}
for i, addr in enumerate(env["REDLOCK_NODES"].split(",")):
    p = addr.rsplit(":", 1)[1]
    names[p] = ("<n%d" % (i + 1)).ljust(len(p) - 1, "_") + ">"  # as long as the port
cases = load_cases(env.get("SENTINEL_PROBE_CASES",
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "sentinel_cases.txt")))
time.sleep(0.5)
out = open(os.path.join(out_dir, env["REDLOCK_CLIENT"] + ".txt"), "w")
for name, cmds in cases:
    lines = []
    c = Conn(int(port))
    lines.append("## %s" % (name or ""))
    for _, args in cmds:
        args = [a.replace("$MASTER", master) for a in args]
        reply = c.send(args)
        n = len(args) - 2 if args[0].upper() in ("SUBSCRIBE", "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE") else 0
        c.s.settimeout(1.0)
        for _ in range(n):  # one confirmation per channel
            try:
                reply += c.reply()
            except Exception as e:  # noqa: BLE001 (a missing reply is the finding)
                reply += ("(%s)" % (e or type(e).__name__)).encode()
                break
        text = repr(reply)
        for p, nm in names.items():
            text = text.replace(p, nm)
        lines.append("> %s" % shlex.join(args))
        lines.append("  %s" % text)
    c.s.close()
    out.write("\n".join(lines) + "\n")
    out.flush()
out.close()
deadline = time.time() + int(env["REDLOCK_DURATION_MS"]) / 1000 - 1
while time.time() < deadline:
    time.sleep(0.1)

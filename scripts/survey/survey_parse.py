#!/usr/bin/env python3
"""Turn survey.sh's captures into one library's command list.

    python3 scripts/survey/survey_parse.py --slug SLUG \
        --runs reports/command-survey/runs/SLUG --out reports/command-survey

survey.sh runs it after its lab runs; run it alone to rebuild a list from
the captures already there (from the repository root). Needs tshark.

For each run directory under --runs (one lab run: env-<client>-<pid>.txt,
lo.pcap, monitor/<port>-<pid>-<n>.txt):
  - the client->server bytes of every TCP stream whose server port is one of
    a client's link ports (REDLOCK_NODES: `direct`; REDLOCK_SENTINEL:
    `sentinel`) and whose SYN is in the capture are reassembled (tshark) and
    parsed as RESP (or inline) commands: the bytes the driver wrote, so
    commands a server rejects, which MONITOR does not show, count too;
  - the `[0 lua]` lines of the MONITOR files are the commands scripts ran
    (`script`): only the drivers send scripts in a lab run. These counts are
    lower bounds (calls while a monitor is re-attached are missed).
Normalising (norm()): the command name and subcommand upper-cased (a
SENTINEL subcommand as sent), its option words in the order sent without
their values, HELLO's protocol, INFO's sections, SELECT's db, pub/sub
channels with the resource written <resource>; keys, values and script
bodies left out.
Writes OUT/<slug>.txt (`COMMAND [options]  <count>  <where>`, sorted) and
OUT/details/<slug>/: runs.tsv (the count per run), examples.txt (one full
command per line of the list), scripts/<sha1>.lua (every script body sent),
script_calls.jsonl (up to 3 recorded calls per script, for compare.py).
"""
import argparse
import collections
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

# Commands whose first argument is a subcommand.
CONTAINERS = {
    "CLIENT", "SCRIPT", "CONFIG", "SENTINEL", "COMMAND", "OBJECT", "MEMORY",
    "CLUSTER", "DEBUG", "ACL", "FUNCTION", "PUBSUB", "XINFO", "XGROUP",
    "LATENCY", "SLOWLOG", "MODULE",
}
# Option words kept as sent (values after them are left out), by command.
OPTIONS = {
    "SET": {"NX", "XX", "GET", "EX", "PX", "EXAT", "PXAT", "KEEPTTL"},
    "GETEX": {"EX", "PX", "EXAT", "PXAT", "PERSIST"},
    "ZADD": {"NX", "XX", "GT", "LT", "CH", "INCR"},
    "ZRANGE": {"BYSCORE", "BYLEX", "REV", "LIMIT", "WITHSCORES"},
    "ZRANGEBYSCORE": {"WITHSCORES", "LIMIT"},
    "ZREVRANGE": {"WITHSCORES"},
    "ZREVRANGEBYSCORE": {"WITHSCORES", "LIMIT"},
    "ZRANGESTORE": {"BYSCORE", "BYLEX", "REV", "LIMIT"},
    "EXPIRE": {"NX", "XX", "GT", "LT"},
    "PEXPIRE": {"NX", "XX", "GT", "LT"},
    "EXPIREAT": {"NX", "XX", "GT", "LT"},
    "PEXPIREAT": {"NX", "XX", "GT", "LT"},
    "SCAN": {"MATCH", "COUNT", "TYPE"},
    "HSCAN": {"MATCH", "COUNT"},
    "ZSCAN": {"MATCH", "COUNT"},
    "CLIENT": {"TYPE", "ID", "ADDR", "LADDR", "SKIPME", "USER", "ON", "OFF",
               "SKIP", "YES", "NO", "LIB-NAME", "LIB-VER", "ERROR", "TIMEOUT",
               "BCAST", "OPTIN", "OPTOUT", "NOLOOP", "REDIRECT", "PREFIX"},
    "SCRIPT": {"ASYNC", "SYNC"},
    "FLUSHALL": {"ASYNC", "SYNC"},
    "FLUSHDB": {"ASYNC", "SYNC"},
    "HELLO": {"AUTH", "SETNAME"},
    "SHUTDOWN": {"NOSAVE", "SAVE", "NOW", "FORCE", "ABORT"},
    "FAILOVER": {"TO", "FORCE", "ABORT", "TIMEOUT"},
    "RESTORE": {"REPLACE", "ABSTTL", "IDLETIME", "FREQ"},
    "COPY": {"DB", "REPLACE"},
    "LPOS": {"RANK", "COUNT", "MAXLEN"},
}
# Commands whose argument itself is the interesting part (kept as sent).
KEEP_ARGS = {"INFO", "SELECT", "CONFIG", "SENTINEL", "COMMAND"}


def norm(args, resource):
    """`COMMAND [subcommand/options as sent]` for one command's arguments."""
    if not args:
        return None
    name = args[0].upper()
    rest = args[1:]
    words = [name]
    if name in CONTAINERS and rest:
        sub = rest[0]
        words.append(sub.upper() if name != "SENTINEL" else sub)
        rest = rest[1:]
        if name == "CONFIG" and words[1] in ("GET", "SET") and rest:
            words.append(rest[0])
            rest = rest[1:]
        if name == "SENTINEL" and rest and words[1].lower() in ("set", "config"):
            words.append(rest[0])
    if name == "HELLO":
        if rest:
            words.append(rest[0])
    elif name == "INFO":
        words.extend(a.lower() for a in rest)
    elif name == "SELECT":
        words.extend(rest)
    elif name in ("LPOP", "RPOP") and len(rest) == 2:
        words.append("<count>")
    elif name == "PING" and rest:
        words.append("<message>")
    elif name in ("SUBSCRIBE", "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "PUBLISH", "SPUBLISH", "SSUBSCRIBE"):
        chans = rest[:1] if name in ("PUBLISH", "SPUBLISH") else rest
        for c in chans:
            if resource:
                c = c.replace(resource, "<resource>")
            c = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", c)
            words.append(c)
    elif name == "CLIENT" and len(words) > 1 and words[1] == "SETNAME":
        pass
    elif name in OPTIONS:
        opts = OPTIONS[name]
        for a in rest:
            if a.upper() in opts:
                words.append(a.upper())
    return " ".join(words)


def parse_resp(buf):
    """Commands (lists of str) in a client's byte stream, RESP or inline."""
    cmds = []
    i, n = 0, len(buf)
    while i < n:
        if buf[i:i + 1] == b"*":
            j = buf.find(b"\r\n", i)
            if j < 0:
                break
            count = int(buf[i + 1:j])
            i = j + 2
            args = []
            for _ in range(max(count, 0)):
                if buf[i:i + 1] != b"$":
                    raise ValueError("expected bulk string at %d: %r" % (i, buf[i:i + 20]))
                j = buf.find(b"\r\n", i)
                size = int(buf[i + 1:j])
                i = j + 2
                args.append(buf[i:i + size].decode("utf-8", "backslashreplace"))
                i += size + 2
            if i > n:
                break  # cut off at the end of the capture
            cmds.append(args)
        else:
            j = buf.find(b"\n", i)
            if j < 0:
                break
            line = buf[i:j].strip().decode("utf-8", "backslashreplace")
            i = j + 1
            if line:
                cmds.append(line.split())
    return cmds


MON_LINE = re.compile(r'^(\d+\.\d+) \[(\d+) ([^\]]+)\] (.*)$')


def parse_quoted(s):
    """The arguments of a MONITOR line ("a" "b\\"c" ...)."""
    args, i, n = [], 0, len(s)
    while i < n:
        if s[i] != '"':
            i += 1
            continue
        i += 1
        out = []
        while i < n and s[i] != '"':
            if s[i] == "\\" and i + 1 < n:
                c = s[i + 1]
                if c == "x" and i + 3 < n:
                    out.append(chr(int(s[i + 2:i + 4], 16)))
                    i += 4
                    continue
                out.append({"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b"}.get(c, c))
                i += 2
                continue
            out.append(s[i])
            i += 1
        args.append("".join(out))
        i += 1
    return args


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            env[k] = v
    return env


def port_of(addr):
    return int(addr.rsplit(":", 1)[1])


def streams_to(pcap, ports):
    """{(stream, dstport): bytes} of the client->server side of every TCP
    stream whose destination port is in `ports` and whose opening (SYN) is
    in the capture: a stream already open when the capture began belongs to
    an earlier run whose port this run's link got again."""
    if not ports:
        return {}
    flt = "tcp.dstport in {%s} && (tcp.len > 0 || (tcp.flags.syn == 1 && tcp.flags.ack == 0))" % (
        ", ".join(str(p) for p in sorted(ports)))
    res = subprocess.run(
        ["tshark", "-n", "-r", pcap, "-Y", flt, "-T", "fields", "-E", "separator=\t",
         "-e", "tcp.stream", "-e", "tcp.dstport", "-e", "tcp.seq_raw", "-e", "tcp.flags.syn",
         "-e", "tcp.payload"],
        capture_output=True, text=True)
    if res.returncode != 0 and not res.stdout:
        sys.exit("tshark failed on %s: %s" % (pcap, res.stderr))
    segs = collections.defaultdict(dict)
    opened = set()
    for line in res.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 5:
            continue
        stream, dport, seq = int(parts[0]), int(parts[1]), int(parts[2])
        syn, payload = parts[3], parts[4]
        if syn in ("1", "True"):
            opened.add(stream)
        if payload:
            segs[(stream, dport)][seq] = bytes.fromhex(payload.replace(":", ""))
    out = {}
    for key, by_seq in segs.items():
        if key[0] not in opened:
            continue
        data = bytearray()
        nxt = None
        for seq in sorted(by_seq):  # (a 32-bit wrap is not expected in a short run)
            chunk = by_seq[seq]
            if nxt is not None and seq < nxt:
                chunk = chunk[nxt - seq:]
            data += chunk
            nxt = seq + len(by_seq[seq]) if nxt is None else max(nxt, seq + len(by_seq[seq]))
        out[key] = bytes(data)
    return out


def survey_run(run, examples, scripts):
    counts = collections.Counter()
    envs = [read_env(p) for p in sorted(glob.glob(os.path.join(run, "env-*.txt")))]
    resource = envs[0].get("REDLOCK_RESOURCE", "") if envs else ""
    where = {}
    for env in envs:
        for addr in filter(None, env.get("REDLOCK_NODES", "").split(",")):
            where[port_of(addr)] = "direct"
        if env.get("REDLOCK_SENTINEL"):
            where[port_of(env["REDLOCK_SENTINEL"])] = "sentinel"
    pcap = os.path.join(run, "lo.pcap")
    if os.path.exists(pcap):
        for (stream, dport), data in streams_to(pcap, set(where)).items():
            try:
                cmds = parse_resp(data)
            except ValueError as e:
                print("%s: stream %d to %d: %s" % (run, stream, dport, e), file=sys.stderr)
                continue
            for args in cmds:
                note(args, where[dport], resource, counts, examples, scripts)
    for mon in sorted(glob.glob(os.path.join(run, "monitor", "*.txt"))):
        with open(mon, encoding="utf-8", errors="backslashreplace") as f:
            for line in f:
                m = MON_LINE.match(line.rstrip("\n"))
                if m and m.group(3) == "lua":
                    note(parse_quoted(m.group(4)), "script", resource, counts, examples, scripts)
    return counts


CALLS = collections.defaultdict(list)  # sha -> a few full EVAL/EVALSHA calls


def note(args, where, resource, counts, examples, scripts):
    key = norm(args, resource)
    if key is None:
        return
    counts[(key, where)] += 1
    if (key, where) not in examples:
        shown = [a if len(a) <= 80 else a[:60] + "...(%d chars)" % len(a) for a in args]
        shown = [a.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
                 .replace("\t", "\\t") for a in shown]
        # other control characters (a random token's bytes) as \xNN: the file stays text
        shown = [re.sub(r"[\x00-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group()), a) for a in shown]
        examples[(key, where)] = " ".join(shown)
    name = args[0].upper()
    body = None
    if name == "EVAL" and len(args) > 1:
        body = args[1]
    elif name == "SCRIPT" and len(args) > 2 and args[1].upper() == "LOAD":
        body = args[2]
    if body is not None:
        scripts[hashlib.sha1(body.encode("utf-8", "surrogateescape")).hexdigest()] = body
    if name in ("EVAL", "EVALSHA") and len(args) > 2:
        sha = args[1].lower() if name == "EVALSHA" else hashlib.sha1(
            args[1].encode("utf-8", "surrogateescape")).hexdigest()
        call = args[2:]
        if call not in CALLS[sha] and len(CALLS[sha]) < 3:
            CALLS[sha].append(call)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--slug", required=True)
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    total = collections.Counter()
    examples, scripts = {}, {}
    per_run = []
    for run in sorted(d for d in glob.glob(os.path.join(a.runs, "*")) if os.path.isdir(d)):
        c = survey_run(run, examples, scripts)
        per_run.append((os.path.basename(run), c))
        total.update(c)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.slug + ".txt"), "w") as f:
        for (key, where), n in sorted(total.items()):
            f.write("%s  %d  %s\n" % (key, n, where))
    det = os.path.join(a.out, "details", a.slug)
    os.makedirs(os.path.join(det, "scripts"), exist_ok=True)
    with open(os.path.join(det, "runs.tsv"), "w") as f:
        f.write("run\tcommand\twhere\tcount\n")
        for run, c in per_run:
            for (key, where), n in sorted(c.items()):
                f.write("%s\t%s\t%s\t%d\n" % (run, key, where, n))
    with open(os.path.join(det, "examples.txt"), "w") as f:
        for (key, where), ex in sorted(examples.items()):
            f.write("%s\t%s\t%s\n" % (key, where, ex))
    with open(os.path.join(det, "script_calls.jsonl"), "w") as f:
        for sha in sorted(CALLS):
            for call in CALLS[sha]:
                f.write(json.dumps({"sha": sha, "numkeys_keys_args": call}) + "\n")
    for sha, body in scripts.items():
        with open(os.path.join(det, "scripts", sha + ".lua"), "w") as f:
            f.write(body)


if __name__ == "__main__":
    main()

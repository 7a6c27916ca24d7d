#!/usr/bin/env python3
"""The node against redis-server, for every command the survey found: the
replies of `redlock-sim node` and of a `redis-server --save '' --appendonly
no` to the same commands, compared byte for byte (raw RESP).

    python3 scripts/survey/compare.py                # from the repository root
    python3 scripts/survey/compare.py --no-replay    # the cases and scripts only (seconds)
    python3 scripts/survey/compare.py --redis P1 --node P2   # servers already running

Without --redis/--node it starts both itself on free ports (redis-server
from PATH, the node from --bin, default target/release/redlock-sim) and
stops them at the end. It writes, into --out (default
reports/command-survey/compare/):

node-vs-redis-server.txt: the cases of cases.txt, then every captured
script. Cases (cases.txt): separated by blank lines; `# name` names a case,
every other line is one command, split like a shell line (shlex). `!`
before a command marks it as compared (when no line of a case is marked,
every line is); `~` after it compares the shape only (every run of digits
read as 0: times, ids, TTLs). `INFO` replies are compared by their fields:
the fields redis-server has and the node lacks, and the values of the
fields lock clients read. Each case runs on a fresh connection after
FLUSHALL, once under RESP2 and once after `HELLO 3` (RESP3), unless it
sends HELLO itself. Every Lua script the survey captured
(DETAILS/*/scripts/<sha>.lua) is then loaded on both servers and each call
recorded for it (DETAILS/*/script_calls.jsonl) run twice in a row by
EVALSHA, under both protocols, compared by shape (lock scripts answer
TTLs).

redis-cli-transcript.txt: redis-cli's answers on both servers to a few
commands that differed at the survey or differ now (TRANSCRIPT).

replay-node-vs-redis-server.txt (needs the raw captures, RUNS/<slug>/<run>/
lo.pcap, and tshark; 3 to 4 minutes): every client->node stream the survey
captured is replayed command by command on both servers, each on a fresh
connection after FLUSHALL, SCRIPT FLUSH and the library's scripts loaded
(so that a release or an extension finds its lock), and the replies are
compared by shape. `WAIT` and `WAITAOF` are not replayed (a timeout each;
compared in the cases). The replies to `CLIENT`, `CLUSTER`, `ROLE`, `INFO`
and `HELLO` are compared in the cases and not counted here. Invalidation
pushes (RESP3, after rueidis's `CLIENT TRACKING ON OPTOUT`) are read aside
and compared per stream, in order, by shape.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# INFO fields lock clients read (ioredis: loading; Redisson: connected_slaves,
# role, aof_enabled; Spring Integration 5.1: redis_version; Lettuce/others:
# redis_mode, role).
INFO_READ = ["redis_version", "redis_mode", "role", "connected_slaves", "loading",
             "aof_enabled", "master_link_status", "cluster_enabled"]


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("connection closed")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def reply(self):
        """One reply, as the raw bytes it came in."""
        line = self._line()
        t, rest = line[:1], line[1:]
        raw = line + b"\r\n"
        if t in (b"$", b"=", b"!"):
            n = int(rest)
            if n >= 0:
                raw += self._exact(n + 2)
        elif t in (b"*", b"%", b"~", b">", b"|"):
            n = int(rest)
            if n > 0:
                k = n * 2 if t in (b"%", b"|") else n
                for _ in range(k):
                    raw += self.reply()
            if t == b"|":  # an attribute precedes the real reply
                raw += self.reply()
        return raw

    def send(self, args, timeout=3.0):
        self.s.settimeout(timeout)
        self.s.sendall(encode(args))
        try:
            return self.reply()
        except socket.timeout:
            return b"(no reply within %.1fs)" % timeout
        except (EOFError, ConnectionError) as e:
            return ("(%s)" % e).encode()


def load_cases(path):
    """[(name, [(flags, args)])]; flags: '' | '!' | '!~' | '~'."""
    cases, cur, name = [], [], None
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            if cur:
                cases.append((name, cur))
            cur, name = [], None
            continue
        if line.startswith("#"):
            if cur or name is not None:
                name = line[1:].strip() if not cur else name
            else:
                name = line[1:].strip()
            continue
        m = re.match(r"^([!~]*)(.*)$", line)
        cur.append((m.group(1), shlex.split(m.group(2))))
    if cur:
        cases.append((name, cur))
    return [(n, c) for n, c in cases if c]


def flushall(port):
    c = Conn(port)
    c.send(["FLUSHALL"])
    c.s.close()


def run(port, cmds, resp3):
    flushall(port)
    c = Conn(port)
    if resp3:
        c.send(["HELLO", "3"])
    out = [c.send(args) for args in cmds]
    c.s.close()
    return out


def shape(raw):
    return re.sub(rb"\d+", b"0", raw)


def info_fields(raw):
    text = raw.decode("utf-8", "replace")
    fields = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith(("$", "=", "#")):
            k, _, v = line.partition(":")
            fields[k.strip()] = v.strip()
    return fields


def compare_info(r, n):
    """(same?, text) for two INFO replies."""
    rf, nf = info_fields(r), info_fields(n)
    missing = sorted(k for k in rf if k not in nf)
    read = ["%s=%r/%r" % (k, rf.get(k), nf.get(k)) for k in INFO_READ
            if (k in rf or k in nf) and rf.get(k) != nf.get(k)]
    rsec = re.findall(rb"# (\w+)", r)
    nsec = re.findall(rb"# (\w+)", n)
    text = "sections redis-server %s, node %s; fields redis-server %d, node %d; " \
           "node lacks %d: %s; read fields differing (redis-server/node): %s; reply type %r/%r" % (
               [s.decode() for s in rsec], [s.decode() for s in nsec], len(rf), len(nf),
               len(missing), " ".join(missing[:80]) + (" ..." if len(missing) > 80 else ""),
               ", ".join(read) or "none", r[:1], n[:1])
    return (not missing and not read and r[:1] == n[:1]), text


def compare_case(redis, node, name, cmds, out):
    has_hello = any(a and a[0].upper() == "HELLO" for _, a in cmds)
    marked = [i for i, (f, _) in enumerate(cmds) if "!" in f] or list(range(len(cmds)))
    differ = False
    lines = []
    for resp3 in ([False] if has_hello else [False, True]):
        args = [a for _, a in cmds]
        r = run(redis, args, resp3)
        n = run(node, args, resp3)
        proto = "RESP3" if resp3 else "RESP2"
        for i in marked:
            flags, a = cmds[i]
            if a[0].upper() == "INFO":
                same, text = compare_info(r[i], n[i])
                lines.append("   [%s] > %s\n     %s" % (proto, shlex.join(a), text))
            else:
                same = (shape(r[i]) == shape(n[i])) if "~" in flags else (r[i] == n[i])
                lines.append("   [%s] > %s%s" % (proto, shlex.join(a)[:160], "   (shape)" if "~" in flags else ""))
                lines.append("     redis-server: %r" % r[i][:400])
                if r[i] != n[i]:
                    lines.append("     node:         %r" % n[i][:400])
            if not same:
                differ = True
                lines[-1] += "   <-- DIFFERENT" if "INFO" not in lines[-1][:20] else ""
    out.append("## %s: %s" % (name or shlex.join(cmds[0][1]), "DIFFERENT" if differ else "same"))
    out.extend(lines)
    return not differ


def script_cases(details):
    bodies, calls = {}, {}
    for path in glob.glob(os.path.join(details, "*", "scripts", "*.lua")):
        bodies[os.path.basename(path)[:-4]] = (open(path).read(), path.split(os.sep)[-3])
    for path in glob.glob(os.path.join(details, "*", "script_calls.jsonl")):
        for line in open(path):
            c = json.loads(line)
            calls.setdefault(c["sha"], [])
            if c["numkeys_keys_args"] not in calls[c["sha"]]:
                calls[c["sha"]].append(c["numkeys_keys_args"])
    for sha in sorted(bodies):
        body, lib = bodies[sha]
        for call in calls.get(sha, []):
            cmds = [("", ["SCRIPT", "LOAD", body])] + [("!~", ["EVALSHA", sha] + call)] * 2
            first = body.strip().splitlines()[0][:60] if body.strip() else ""
            yield "script %s (%s: %s) %s" % (sha[:8], lib, first, shlex.join(call)[:80]), cmds


def printable(text):
    """Control characters (a random token's bytes, in a command shown) as
    \\xNN, so that the outputs stay text."""
    return re.sub(r"[\x00-\x09\x0b-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group()), text)


def free_port():
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def wait_ready(port, what, proc, deadline=10.0):
    end = time.time() + deadline
    while time.time() < end:
        if proc.poll() is not None:
            sys.exit("%s exited at start (status %s)" % (what, proc.returncode))
        try:
            c = Conn(port)
            if c.send(["PING"]).startswith(b"+PONG"):
                c.s.close()
                return
            c.s.close()
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit("%s did not answer on port %d" % (what, port))


class Servers:
    """A redis-server and a node of our own, on free ports, stopped at exit."""

    def __init__(self, bin_path):
        if not shutil.which("redis-server"):
            sys.exit("redis-server not found (Debian: apt-get install -y redis-server)")
        if not os.access(bin_path, os.X_OK):
            sys.exit("%s not found (cargo build --release)" % bin_path)
        self.dir = tempfile.mkdtemp(prefix="command-survey-")
        self.redis, self.node = free_port(), free_port()
        self.procs = []
        log = open(os.path.join(self.dir, "redis.log"), "w")
        self.procs.append(subprocess.Popen(
            ["redis-server", "--port", str(self.redis), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir], stdout=log, stderr=log))
        wait_ready(self.redis, "redis-server", self.procs[-1])
        log = open(os.path.join(self.dir, "node.log"), "w")
        self.procs.append(subprocess.Popen(
            [bin_path, "node", "--port", str(self.node)], stdout=log, stderr=log))
        wait_ready(self.node, "redlock-sim node", self.procs[-1])

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def provenance(bin_path, redis_port):
    """One line: what was compared with what."""
    c = Conn(redis_port)
    info = c.send(["INFO", "server"])
    c.s.close()
    m = re.search(rb"redis_version:([^\r\n]+)", info)
    version = m.group(1).decode() if m else "?"
    node = "a node on its own port"
    if bin_path and os.path.exists(bin_path):
        digest = hashlib.sha256(open(bin_path, "rb").read()).hexdigest()[:12]
        shown = os.path.relpath(bin_path, ROOT)
        if shown.startswith(".."):
            shown = os.path.abspath(bin_path)
        node = "redlock-sim node (%s, sha256 %s)" % (shown, digest)
    return "# redis-server %s against %s" % (version, node)


# redis-cli spot checks, on both servers, of what differed at the survey or
# differs now (redis-cli-transcript.txt): FLUSHALL first, then in order.
TRANSCRIPT = [
    ["CLIENT", "SETINFO", "LIB-NAME", "x"],
    ["ROLE"],
    ["CLIENT", "TRACKING", "ON", "OPTOUT"],
    ["CLUSTER", "SLOTS"],
    ["TIME"],
    ["EVAL", 'return redis.call("TIME")', "0"],
    ["ZADD", "lock", "1", "a", "2", "b"],
    ["ZREVRANGE", "lock", "0", "0", "WITHSCORES"],
    ["EVAL", 'return redis.call("ZREVRANGE", KEYS[1], 0, 0, "WITHSCORES")', "1", "lock"],
    ["WAITAOF", "0", "0", "0"],
]


def transcript(redis, node):
    """redis-cli's answers to TRANSCRIPT on both servers, as text; None
    without redis-cli."""
    if not shutil.which("redis-cli"):
        return None
    out = []
    for name, port in (("redis-server", redis), ("node", node)):
        c = Conn(port)
        c.send(["FLUSHALL"])
        c.s.close()
    for args in TRANSCRIPT:
        for name, port in (("redis-server", redis), ("node", node)):
            res = subprocess.run(["redis-cli", "-p", str(port)] + args, capture_output=True, text=True)
            out.append("$ redis-cli -p <%s> %s" % (name, shlex.join(args)))
            out.extend("  " + line for line in (res.stdout + res.stderr).rstrip("\n").splitlines())
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="the node against redis-server, for the surveyed commands")
    ap.add_argument("--redis", type=int, help="a running redis-server's port (with --node)")
    ap.add_argument("--node", type=int, help="a running node's port (with --redis)")
    ap.add_argument("--bin", default="target/release/redlock-sim", help="default: %(default)s")
    ap.add_argument("--survey", default="reports/command-survey", help="default: %(default)s")
    ap.add_argument("--cases", default=os.path.join(HERE, "cases.txt"))
    ap.add_argument("--details", help="default: SURVEY/details")
    ap.add_argument("--runs", help="the raw captures (default: SURVEY/runs)")
    ap.add_argument("--out", help="default: SURVEY/compare")
    ap.add_argument("--no-replay", action="store_true", help="the cases and scripts only")
    ap.add_argument("--replay-only", action="store_true", help="the replay only")
    ap.add_argument("--only", nargs="*", help="replay these slugs only")
    a = ap.parse_args()
    os.chdir(ROOT)
    details = a.details or os.path.join(a.survey, "details")
    runs = a.runs or os.path.join(a.survey, "runs")
    out_dir = a.out or os.path.join(a.survey, "compare")
    os.makedirs(out_dir, exist_ok=True)
    if (a.redis is None) != (a.node is None):
        sys.exit("--redis and --node go together")
    servers = None
    if a.redis is None:
        servers = Servers(a.bin)
        a.redis, a.node = servers.redis, servers.node
    try:
        head = provenance(a.bin if servers else None, a.redis)
        if not a.replay_only:
            out, same, differ = [head], 0, 0
            cases = load_cases(a.cases)
            cases += list(script_cases(details))
            for name, cmds in cases:
                if compare_case(a.redis, a.node, name, cmds, out):
                    same += 1
                else:
                    differ += 1
            total = "%d cases the same, %d different" % (same, differ)
            out.append("\n" + total)
            path = os.path.join(out_dir, "node-vs-redis-server.txt")
            open(path, "w").write(printable("\n".join(out) + "\n"))
            print("%s: %s" % (path, total))
            text = transcript(a.redis, a.node)
            if text is not None:
                path = os.path.join(out_dir, "redis-cli-transcript.txt")
                open(path, "w").write(text)
                print("%s: %d commands on both" % (path, len(TRANSCRIPT)))
        if not a.no_replay:
            if not glob.glob(os.path.join(runs, "*", "*", "lo.pcap")):
                print("no captures under %s: replay skipped (survey.sh makes them)" % runs)
                return
            lines, total = replay(a.redis, a.node, runs, details, a.only)
            path = os.path.join(out_dir, "replay-node-vs-redis-server.txt")
            open(path, "w").write(printable("\n".join([head] + lines + ["", total]) + "\n"))
            print("%s: %s" % (path, total))
    finally:
        if servers:
            servers.stop()


# --- replay: each captured client->node stream, command by command --------

KNOWN = {"CLIENT", "CLUSTER", "ROLE", "INFO", "WAIT", "WAITAOF", "HELLO"}


def send_apart(c, args, pushes, timeout=3.0):
    """The reply to args; push frames (`>`) arriving first go to pushes."""
    c.s.settimeout(timeout)
    c.s.sendall(encode(args))
    try:
        while True:
            raw = c.reply()
            if raw[:1] == b">":
                pushes.append(raw)
                continue
            return raw
    except socket.timeout:
        return b"(no reply within %.1fs)" % timeout
    except (EOFError, ConnectionError) as e:
        return ("(%s)" % e).encode()


def replay(redis, node, runs_dir, details, only=None, limit=400):
    """Replays every client->node stream of every run under runs_dir/<slug>/
    on both servers (FLUSHALL and SCRIPT FLUSH first, then the library's
    scripts from details/<slug>/scripts loaded), one connection per stream,
    and compares the replies by shape, and the pushes each stream received
    (in order, by shape). WAIT/WAITAOF are not replayed (a timeout each:
    compared in the cases); the replies to CLIENT, CLUSTER, ROLE, INFO and
    HELLO are compared in the cases and not counted here (HELLO is still
    sent: it switches the protocol). Returns (lines, total line)."""
    sys.path.insert(0, HERE)
    import survey_parse as sp
    lines = []
    all_total = all_differ = all_streams = push_total = push_differ = 0
    for slug_dir in sorted(glob.glob(os.path.join(runs_dir, "*"))):
        slug = os.path.basename(slug_dir)
        if only and slug not in only:
            continue
        bodies = [open(p).read() for p in sorted(glob.glob(os.path.join(details, slug, "scripts", "*.lua")))]
        total = differ = pushes = pdiffer = streams = 0
        examples = []
        for run in sorted(glob.glob(os.path.join(slug_dir, "*"))):
            envs = [sp.read_env(p) for p in sorted(glob.glob(os.path.join(run, "env-*.txt")))]
            ports = {sp.port_of(a) for e in envs for a in e.get("REDLOCK_NODES", "").split(",") if a}
            if not os.path.exists(os.path.join(run, "lo.pcap")):
                continue
            for (_, _), data in sorted(sp.streams_to(os.path.join(run, "lo.pcap"), ports).items()):
                try:
                    cmds = sp.parse_resp(data)[:limit]
                except ValueError:
                    continue
                cmds = [c for c in cmds if c and c[0].upper() not in ("WAIT", "WAITAOF")]
                if not cmds:
                    continue
                streams += 1
                out, push = {}, {}
                for name, port in (("redis", redis), ("node", node)):
                    c0 = Conn(port)
                    c0.send(["FLUSHALL"])
                    c0.send(["SCRIPT", "FLUSH"])
                    for b in bodies:
                        c0.send(["SCRIPT", "LOAD", b])
                    c0.s.close()
                    c = Conn(port)
                    push[name] = []
                    out[name] = [send_apart(c, a, push[name]) for a in cmds]
                    send_apart(c, ["PING"], push[name])  # what was pushed after the last reply
                    c.s.close()
                for a, r, n in zip(cmds, out["redis"], out["node"]):
                    if a[0].upper() in KNOWN:
                        continue
                    total += 1
                    if shape(r) != shape(n):
                        differ += 1
                        if len(examples) < 3:
                            examples.append("     > %s\n       redis-server: %r\n       node:         %r" % (
                                re.sub(r"\s+", " ", shlex.join(a))[:150], r[:200], n[:200]))
                pr, pn = push["redis"], push["node"]
                pushes += len(pr)
                if [shape(x) for x in pr] != [shape(x) for x in pn]:
                    pdiffer += 1
                    if len(examples) < 3:
                        examples.append("     pushes: redis-server %d %r\n             node %d %r" % (
                            len(pr), pr[:3], len(pn), pn[:3]))
        text = "## replay %s: %d streams, %d commands, %d different" % (slug, streams, total, differ)
        if pushes or pdiffer:
            text += "; %d pushes from redis-server, %d streams whose pushes differ" % (pushes, pdiffer)
        lines.append(text)
        lines.extend(examples)
        all_total += total
        all_differ += differ
        all_streams += streams
        push_total += pushes
        push_differ += pdiffer
    total = "%d streams, %d commands replayed, %d different; %d pushes, %d streams whose pushes differ" % (
        all_streams, all_total, all_differ, push_total, push_differ)
    return lines, total


if __name__ == "__main__":
    main()

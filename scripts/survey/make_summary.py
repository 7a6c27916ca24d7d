#!/usr/bin/env python3
"""The table of docs/commands.md: every command/option the survey found
(reports/command-survey/<slug>.txt), which libraries send it and where, and
whether the node answers it as redis-server 7.0.15 does (the lab's sentinel
as redis-sentinel 7.0.15 does, for `sentinel` rows), with the test of
tests/redis/ that checks it.

    python3 scripts/survey/make_summary.py            # prints the table
    python3 scripts/survey/make_summary.py --write    # puts it in docs/commands.md (between its markers)

The verdicts (DIFFERS, NOTES) and the tests (TESTS) are written here by
hand, from the comparisons' outputs (reports/command-survey/compare/, made
by compare.py and sentinel_compare.py): after a change to the node, run the
comparisons again and update them here. A command the lists have and the
verdicts do not name reads "yes"; check it in the comparisons' outputs.
"""
import collections
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SURVEY = os.path.join(ROOT, "reports", "command-survey")
DOC = os.path.join(ROOT, "docs", "commands.md")

# Each surveyed slug: (library, [(slug, group, version)]). A library whose
# every surveyed variant sends a command is named alone; otherwise the
# variants that send it follow its name, a group whose every variant does
# by the group's name alone (`Redisson RLock 3.52.0/lease, RFencedLock`).
LIBRARIES = [
    ("redis-py Lock", [("redis-py-lock-2.9.1", "", "2.9.1"), ("redis-py-lock-2.10.0", "", "2.10.0"),
                       ("redis-py-lock-8.1.0", "", "8.1.0")]),
    ("python-redis-lock", [("python-redis-lock-4.0.0", "", "4.0.0")]),
    ("pottery", [("pottery-redlock-3.0.1", "", "3.0.1")]),
    ("redlock-py", [("redlock-py-1.0.8", "", "1.0.8")]),
    ("redis-semaphore", [("redis-semaphore-mutex-5.3.0", "Mutex", "5.3.0"),
                         ("redis-semaphore-mutex-5.3.1", "Mutex", "5.3.1"),
                         ("redis-semaphore-mutex-5.8.0", "Mutex", "5.8.0"),
                         ("redis-semaphore-redlockmutex-5.8.0", "RedlockMutex", "5.8.0")]),
    ("node-redlock", [("node-redlock-5.0.0-beta.2", "", "5.0.0-beta.2")]),
    ("Redisson", [("redisson-rlock-watchdog-trusted-3.43.0", "RLock", "3.43.0"),
                  ("redisson-rlock-watchdog-trusted-3.44.0", "RLock", "3.44.0"),
                  ("redisson-rlock-watchdog-3.52.0", "RLock", "3.52.0"),
                  ("redisson-rlock-lease-3.52.0", "RLock", "lease"),
                  ("redisson-rfencedlock-fenced-3.52.0", "RFencedLock", ""),
                  ("redisson-redissonredlock-3.52.0", "RedissonRedLock", "")]),
    ("Spring Integration", [("spring-integration-redislockregistry-5.1.1", "", "5.1.1"),
                            ("spring-integration-redislockregistry-5.1.2", "", "5.1.2"),
                            ("spring-integration-redislockregistry-6.5.5", "", "6.5.5")]),
    ("ShedLock", [("shedlock-redislockprovider-7.10.1", "", "default"),
                  ("shedlock-redislockprovider-safeupdate-7.10.1", "", "safeUpdate")]),
    ("bsm/redislock", [("bsm-redislock-0.9.4", "", "0.9.4")]),
    ("redsync", [("redsync-4.0.3", "", "4.0.3"), ("redsync-4.0.4", "", "4.0.4"),
                 ("redsync-4.12.0", "", "4.12.0"), ("redsync-4.12.1", "", "4.12.1"),
                 ("redsync-4.18.1", "", "4.18.1")]),
    ("rueidislock", [("rueidislock-1.0.79", "", "1.0.79")]),
    ("Symfony Lock", [("symfony-lock-5.4.53", "RedisStore", ""),
                      ("symfony-lock-combined-5.4.53", "CombinedStore", "")]),
    ("Laravel", [("laravel-redislock-8.83.26", "", "8.83.26")]),
    ("the built-in client", [("redlock-sims-client-built-in", "", "")]),
]

# (command key regex, where or None) -> verdict: where the node (or the
# lab's sentinel) does not answer as redis-server (redis-sentinel) does.
# Listed first in the table, in this order.
DIFFERS = [
    (r"CLIENT SETINFO LIB-(NAME|VER)", "direct",
     "**no**, on purpose: `+OK`, as Redis 7.2 answers it; redis-server 7.0.15 answers "
     "`ERR unknown subcommand 'setinfo'`, which every client here ignores"),
    (r"CLIENT SETINFO LIB-(NAME|VER)", "sentinel",
     "**no**, on purpose: the lab's sentinel answers `+OK` too; redis-sentinel 7.0.15 "
     "`ERR unknown subcommand 'SETINFO'`"),
    (r"INFO|INFO all", "direct",
     "**no** (fields): the node answers the Server, Replication and Keyspace sections (6 fields; "
     "redis-server 11 sections and 182 fields, `all` 13 and 198). It lacks `loading`, `aof_enabled` "
     "and `cluster_enabled`. ioredis reads `loading` and takes a missing one as loaded. Redisson 3.52 "
     "reads `connected_slaves` (the same) and reads `aof_enabled` only where `WAITAOF` exists"),
    (r"INFO replication", "direct",
     "**no** (fields): 3 of redis-server's 11 fields (`master_replid`, `repl_backlog_*` and others "
     "missing); `role` and `connected_slaves`, which Redisson reads, are the same"),
    (r"INFO server", "direct",
     "**no** (fields): 3 fields, redis-server 24 (`run_id`, `tcp_port`, `uptime_*` and others "
     "missing); `redis_version`, which Spring Integration 5.1 reads, is the same (`7.0.15`)"),
    (r"ROLE", "direct",
     "**no** (value): the replication offset. The node counts its writes from its start; "
     "redis-server answers 0 until a replica attaches. The shape is the same (`master`, the offset, "
     "`[]`)"),
    (r"SENTINEL MASTERS", "sentinel",
     "**no** (values): `num-slaves` 1, redis-sentinel 2 (it counts the lab's observer replica). "
     "`down-after-milliseconds` and `failover-timeout`: the lab's sentinel answers Redis's defaults "
     "(30000, 180000) in a scenario without a failover, redis-sentinel the lab's configuration "
     "(`cluster.failover_after`, a day when unset, and 3000). "
     "The fields redis-py reads (`flags`, `num-other-sentinels`) are the same"),
    (r"SENTINEL SLAVES", "sentinel",
     "**no** (values): redis-sentinel also lists the lab's observer replica (`127.0.0.1:1`, "
     "`slave,disconnected`). Its `master-port` for n2 is n2's own link to n1; the lab's sentinel "
     "gives the client's link to n1. `down-after-milliseconds` as in `SENTINEL MASTERS`"),
]

# (command key regex, where or None) -> a note after "yes".
NOTES = [
    (r"TIME", None, "yes; missing until the node-commands merge (see below)"),
    (r"ZREVRANGE WITHSCORES", None, "yes; missing until the node-commands merge (see below)"),
    (r"CLIENT TRACKING ON OPTOUT", "direct",
     "yes, and the same invalidation pushes in the replay; missing until the node-commands merge"),
    (r"CLIENT TRACKING ON OPTOUT", "sentinel", "yes; missing until the node-commands merge"),
    (r"SUBSCRIBE .*", "sentinel",
     "yes: a confirmation per channel, and `+switch-master` at a failover; missing until the "
     "node-commands merge"),
    (r"UNSUBSCRIBE .*", "sentinel", "yes: a confirmation per channel; missing until the node-commands merge"),
    (r"CLUSTER SLOTS", None,
     "yes: `ERR This instance has cluster support disabled`; the error text differed until the "
     "node-commands merge"),
    (r"WAITAOF", None,
     "yes: both `ERR unknown command 'WAITAOF'` (a Redis 7.2 command; Redisson 3.52 probes it and "
     "falls back to `WAIT`)"),
    (r"CLIENT MAINT_NOTIFICATIONS ON", None,
     "yes: both `ERR unknown subcommand` (a subcommand of newer Redis; the clients go on)"),
    (r"HELLO 3", None, "yes (the connection `id` aside)"),
    (r"EVAL|EVALSHA", None, "yes, every captured script and call"),
    (r"BLPOP", None, "yes (a timeout answers a null, then the pop)"),
]

# (command key regex, where or None) -> the tests/redis/ files that check it
# against redis-server (redis-sentinel).
TESTS = [
    (r"HELLO 3|PING|CLIENT TRACKING .*|SENTINEL .*|(UN)?SUBSCRIBE .*", "sentinel", "sentinel.rs"),
    (r"CLIENT SETINFO .*", "sentinel", "none (the survey's sentinel probe)"),
    (r"CLIENT MAINT_NOTIFICATIONS ON", "sentinel", "sentinel.rs (`CLIENT NOSUCH`: an unknown subcommand)"),
    (r"HELLO 3", None, "differential_resp3.rs"),
    (r"PING|SELECT 0", None, "differential.rs"),
    (r"ROLE|INFO|INFO server", None, "differential.rs (the shape)"),
    (r"INFO replication|INFO all", None, "differential.rs (the shape), differential_wait.rs (`connected_slaves`)"),
    (r"CLIENT SETINFO .*", None, "differential_resp3.rs (checks that redis-server still refuses it)"),
    (r"CLIENT MAINT_NOTIFICATIONS ON", None, "differential_resp3.rs (`CLIENT NOPE`: an unknown subcommand)"),
    (r"CLIENT TRACKING .*", None, "differential_tracking.rs"),
    (r"CLUSTER SLOTS", None, "differential_cluster.rs"),
    (r"WAIT", None, "differential_wait.rs"),
    (r"WAITAOF", None, "differential.rs (unknown commands, by other names)"),
    (r"TIME", "script", "differential_time.rs"),
    (r"TYPE", "script", "differential_time.rs (Symfony's scripts), differential_resp3.rs"),
    (r"ZADD|ZCOUNT|ZREM|ZREMRANGEBYSCORE|ZSCORE|ZREVRANGE WITHSCORES", "script",
     "differential_time.rs (Symfony's scripts), differential_types.rs"),
    (r"PEXPIREAT", "script", "differential_time.rs (Symfony's scripts), differential.rs"),
    (r"SET NX PXAT", "script", "differential_tracking.rs (rueidislock's scripts), differential.rs (`PXAT`)"),
    (r"SET NX PX", "script", "differential_tracking.rs (rueidislock's scripts)"),
    (r"SET PX", "script", "differential_time.rs (Symfony's check), differential_scripts.rs"),
    (r"SET|SETNX|INCR", "script", "differential_scripts.rs"),
    (r"SET.*|SETNX|GETSET|GET|DEL|PTTL", "direct", "differential.rs"),
    (r"GET|DEL", "script", "differential.rs (the lock scripts)"),
    (r"PEXPIRE", "script", "differential.rs (the extend script), differential_reentrant.rs"),
    (r"EXISTS|HEXISTS|HINCRBY|PTTL", "script", "differential_reentrant.rs (Redisson's scripts)"),
    (r"HEXISTS|UNLINK", "direct", "differential_resp3.rs"),
    (r"UNLINK", "script", "differential_scripts.rs"),
    (r"GETRANGE", "script", "differential_resp3.rs"),
    (r"BLPOP", None, "differential_types.rs"),
    (r"LPUSH", "script", "differential_types.rs"),
    (r"PUBLISH .*", "script", "differential_pubsub.rs, differential_scripts.rs"),
    (r"EVAL|EVALSHA|SCRIPT LOAD", "direct", "differential.rs, differential_scripts.rs"),
]


def lookup(table, key, where):
    for i, (pat, w, text) in enumerate(table):
        if (w is None or w == where) and re.fullmatch(pat, key):
            return i, text
    return None, None


def load():
    libs = {}
    for path in sorted(glob.glob(os.path.join(SURVEY, "*.txt"))):
        rows = []
        for line in open(path):
            m = re.match(r"^(.*?)  (\d+)  (direct|script|sentinel)$", line.rstrip("\n"))
            if m:
                rows.append((m.group(1), int(m.group(2)), m.group(3)))
        if rows:
            libs[os.path.basename(path)[:-4]] = rows
    return libs


def who(slugs, all_slugs):
    """The libraries named compactly (see LIBRARIES)."""
    if set(all_slugs) <= set(slugs):
        return "all"
    known = set()
    parts = []
    for name, variants in LIBRARIES:
        known.update(v[0] for v in variants)
        surveyed = [v for v in variants if v[0] in all_slugs]
        present = [v for v in surveyed if v[0] in slugs]
        if not present:
            continue
        if len(present) == len(surveyed):
            parts.append(name)
            continue
        groups = []
        for group in dict.fromkeys(g for _, g, _ in surveyed):
            mine = [v for _, g, v in present if g == group]
            if not mine:
                continue
            if len(mine) == len([1 for _, g, _ in surveyed if g == group]) and group:
                groups.append(group)
            else:
                groups.append((group + " " if group else "") + "/".join(mine))
        parts.append("%s %s" % (name, ", ".join(groups)))
    parts += sorted(s for s in slugs if s not in known)  # a list not in LIBRARIES yet
    return "; ".join(parts)


def table():
    libs = load()
    by = collections.defaultdict(lambda: [0, []])
    for lib, rows in libs.items():
        for key, n, where in rows:
            by[(key, where)][0] += n
            by[(key, where)][1].append(lib)
    rows = []
    for (key, where), (n, slugs) in by.items():
        rank, verdict = lookup(DIFFERS, key, where)
        if rank is None:
            rank = len(DIFFERS)
            _, verdict = lookup(NOTES, key, where)
            verdict = verdict or "yes"
        _, test = lookup(TESTS, key, where)
        rows.append((rank, key, where, who(slugs, list(libs)), verdict, test or "none"))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    out = ["| command / option | where | sent by | answered as redis-server answers it? | checked by (`tests/redis/`) |",
           "| --- | --- | --- | --- | --- |"]
    for _, key, where, names, verdict, test in rows:
        out.append("| `%s` | %s | %s | %s | %s |" % (key, where, names, verdict, test))
    out.append("")
    out.append("%d libraries, %d commands and options, %d rows (a command and where it is sent)." % (
        len(libs), len({k for k, _ in by}), len(rows)))
    return "\n".join(out) + "\n"


def main():
    text = table()
    if "--write" not in sys.argv:
        sys.stdout.write(text)
        return
    doc = open(DOC).read()
    a, b = "<!-- table -->\n", "<!-- /table -->"
    doc = doc[:doc.index(a) + len(a)] + text + doc[doc.index(b):]
    open(DOC, "w").write(doc)
    print("wrote the table into %s" % os.path.relpath(DOC, ROOT))


if __name__ == "__main__":
    main()

"""python-redis-lock (redis_lock.Lock), used as its users use it.

    python python_redis_lock.py HOST:PORT

Its lock is a string key set with SET NX EX; its release and reset scripts
also push to a list (`lock-signal:<name>`) that waiting clients block on
with BLPOP, so a release wakes a waiter at once. Prints a deterministic
transcript; see tests/redis/lock_libraries.rs.
"""
import sys
import threading
import time

import redis
import redis_lock

from transcript import addrs, note, step, usage

if len(sys.argv) != 2:
    usage("usage: python_redis_lock.py HOST:PORT")
[(host, port)] = addrs(sys.argv[1:])
r = redis.Redis(host=host, port=port)
note(f"python-redis-lock {redis_lock.__version__} over redis-py {redis.__version__}")


def near(ms, expected):
    """A PTTL reading within 1.5 s below the TTL just set."""
    return expected - 1500 < ms <= expected


a = redis_lock.Lock(r, "res", expire=10, id="a")
b = redis_lock.Lock(r, "res", expire=10, id="b")
note("-- acquire and contention")
step("a acquires", lambda: a.acquire(blocking=False))
step("key type", lambda: r.type("lock:res"))
step("owner", lambda: r.get("lock:res"))
step("pttl near 10 s", lambda: near(r.pttl("lock:res"), 10000))
step("b acquires, no wait", lambda: b.acquire(blocking=False))
step("b acquires, waiting 1 s", lambda: b.acquire(timeout=1))
step("a locked", a.locked)
step("a get_owner_id", a.get_owner_id)
step("b releases (not its own)", b.release)
step("a extends to 20 s", lambda: a.extend(20))
step("pttl near 20 s", lambda: near(r.pttl("lock:res"), 20000))
step("b extends (not its own)", lambda: b.extend(20))

note("-- a release wakes a waiter (BLPOP on the signal list)")
woke = {}


def wait_for_it():
    woke["got"] = b.acquire(timeout=5)
    woke["at"] = time.monotonic()


t = threading.Thread(target=wait_for_it)
t.start()
time.sleep(0.3)
released_at = time.monotonic()
step("a releases", a.release)
t.join()
step("b got it", lambda: woke["got"])
step("b woke within 0.5 s of the release", lambda: woke["at"] - released_at < 0.5)
step("owner", lambda: r.get("lock:res"))
step("signal list left", lambda: r.llen("lock-signal:res"))
step("b releases", b.release)
step("key gone", lambda: r.exists("lock:res"))
step("signal list after release", lambda: r.llen("lock-signal:res"))
step("signal expires (pttl at most 1 s)", lambda: 0 < r.pttl("lock-signal:res") <= 1000)

note("-- expiry")
c = redis_lock.Lock(r, "ttl", expire=1, id="c")
d = redis_lock.Lock(r, "ttl", expire=2, id="d")
step("c acquires, 1 s", lambda: c.acquire(blocking=False))
step("d waits 3 s (more than it holds)", lambda: d.acquire(timeout=3))
step("d waits 2 s (no signal; the key expires meanwhile)", lambda: d.acquire(timeout=2))
step("c releases (expired, taken by d)", c.release)
step("owner", lambda: r.get("lock:ttl"))
step("d releases", d.release)

note("-- auto renewal keeps a short lock")
e = redis_lock.Lock(r, "renew", expire=1, id="e", auto_renewal=True)
step("e acquires, 1 s, auto renewal", lambda: e.acquire(blocking=False))
time.sleep(2.5)
step("after 2.5 s: owner", lambda: r.get("lock:renew"))
step("e releases", e.release)
step("key gone", lambda: r.exists("lock:renew"))

note("-- reset")
f = redis_lock.Lock(r, "reset", expire=10, id="f")
step("f acquires", lambda: f.acquire(blocking=False))
step("reset", f.reset)
step("key gone", lambda: r.exists("lock:reset"))
step("signal pushed", lambda: r.llen("lock-signal:reset"))
step("reset_all", lambda: redis_lock.reset_all(r))
note("done")

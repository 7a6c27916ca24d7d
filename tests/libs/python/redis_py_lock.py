"""redis-py's `Lock` (redis.lock.Lock), used as its users use it.

    python redis_py_lock.py PROTOCOL HOST:PORT

PROTOCOL is 2 or 3 (3 makes redis-py open each connection with HELLO 3, its
default since redis-py 8). Prints a deterministic transcript; see
tests/redis/lock_libraries.rs.
"""
import sys
import threading
import time

import redis
from redis.exceptions import LockError, LockNotOwnedError

from transcript import addrs, note, step, usage

if len(sys.argv) != 3 or sys.argv[1] not in ("2", "3"):
    usage("usage: redis_py_lock.py 2|3 HOST:PORT")
protocol = int(sys.argv[1])
[(host, port)] = addrs(sys.argv[2:])
r = redis.Redis(host=host, port=port, protocol=protocol)
note(f"redis-py {redis.__version__} Lock, protocol {protocol}")


def near(ms, expected):
    """A PTTL reading within 1.5 s below the TTL just set."""
    return expected - 1500 < ms <= expected


a = r.lock("pylock:res", timeout=10)
b = r.lock("pylock:res", timeout=10)
step("a acquires", lambda: a.acquire(blocking=False))
step("key type", lambda: r.type("pylock:res"))
step("pttl near 10 s", lambda: near(r.pttl("pylock:res"), 10000))
step("b acquires, no wait", lambda: b.acquire(blocking=False))
step("b acquires, waiting 0.3 s", lambda: b.acquire(blocking_timeout=0.3))
step("a acquires again (not reentrant)", lambda: a.acquire(blocking=False))
step("a locked", a.locked)
step("a owned", a.owned)
step("b owned", b.owned)
step("a extends by 5 s", lambda: a.extend(5))
step("pttl near 15 s", lambda: near(r.pttl("pylock:res"), 15000))
step("a extends to 2 s (replace_ttl)", lambda: a.extend(2, replace_ttl=True))
step("pttl near 2 s", lambda: near(r.pttl("pylock:res"), 2000))
step("a reacquires (ttl back to 10 s)", a.reacquire)
step("pttl near 10 s", lambda: near(r.pttl("pylock:res"), 10000))
step("b releases a lock it never took", b.release)
# another owner's token (release() forgets the token, so set it each time)
b.local.token = b"not-the-owner"
step("b, wrong token, releases", b.release)
b.local.token = b"not-the-owner"
step("b, wrong token, extends", lambda: b.extend(1))
b.local.token = b"not-the-owner"
step("b, wrong token, reacquires", b.reacquire)
step("key still there", lambda: r.exists("pylock:res"))
step("a releases", a.release)
step("key gone", lambda: r.exists("pylock:res"))
step("a releases again", a.release)
step("a extends after release", lambda: a.extend(1))

note("-- expiry")
c = r.lock("pylock:ttl", timeout=0.3)
d = r.lock("pylock:ttl", timeout=10)
step("c acquires, ttl 300 ms", lambda: c.acquire(blocking=False))
c_token = c.local.token
step("pttl at most 300", lambda: 0 < r.pttl("pylock:ttl") <= 300)
step("d acquires at once", lambda: d.acquire(blocking=False))
time.sleep(0.6)
step("after 600 ms: c locked", c.locked)
step("d acquires", lambda: d.acquire(blocking=False))
step("c owned", c.owned)
step("c releases (expired, taken by d)", c.release)
c.local.token = c_token
step("c, token of an expired hold, extends", lambda: c.extend(1))
step("d releases", d.release)

note("-- blocking acquire while the holder releases from another thread")
e = r.lock("pylock:wait", timeout=10, thread_local=False)
f = r.lock("pylock:wait", timeout=10, sleep=0.02)
step("e acquires", lambda: e.acquire(blocking=False))
t = threading.Timer(0.2, e.release)
t.start()
step("f waits up to 3 s and acquires", lambda: f.acquire(blocking_timeout=3))
t.join()
step("f releases", f.release)

note("-- context manager")
def held():
    with r.lock("pylock:ctx", timeout=5, blocking_timeout=1):
        inside = r.exists("pylock:ctx")
    return (inside, r.exists("pylock:ctx"))
step("inside, after", held)
def contended():
    with r.lock("pylock:ctx2", timeout=5):
        with r.lock("pylock:ctx2", timeout=5, blocking_timeout=0.1):
            return "entered twice"
step("nested with on the same name", contended)
step("key after the failed nesting", lambda: r.exists("pylock:ctx2"))

note("-- the script cache flushed under the lock (redis-py loads it again)")
g = r.lock("pylock:flush", timeout=10)
step("g acquires", lambda: g.acquire(blocking=False))
step("script flush", r.script_flush)
step("script exists after the flush", lambda: r.script_exists(g.lua_release.sha))
step("g extends", lambda: g.extend(1))
step("g releases", g.release)
step("key gone", lambda: r.exists("pylock:flush"))

note("-- a lock name that holds a hash (WRONGTYPE inside the scripts)")
step("hset", lambda: r.hset("pylock:hash", "field", "value"))
h = r.lock("pylock:hash", timeout=10)
step("h acquires", lambda: h.acquire(blocking=False))
h.local.token = b"some-token"
step("h releases", h.release)
h.local.token = b"some-token"
step("h extends", lambda: h.extend(1))
h.local.token = b"some-token"
step("h reacquires", h.reacquire)
step("h locked", h.locked)
step("h owned", h.owned)
step("key type", lambda: r.type("pylock:hash"))

note("-- the connection")
def handshake():
    """What HELLO answered (protocol 3 only), without the version and the id."""
    conn = r.connection_pool.get_connection()
    try:
        meta = conn.handshake_metadata
    finally:
        r.connection_pool.release(conn)
    if meta is None:
        return None
    meta = {(k.decode() if isinstance(k, bytes) else k): v for k, v in meta.items()}
    keep = ("server", "proto", "mode", "role", "modules")
    return {"keys": sorted(meta), **{k: meta.get(k) for k in keep}}
step("HELLO's reply", handshake)
step("client setname", lambda: r.client_setname("lock-worker"))
step("client getname", r.client_getname)
step("client id is an integer", lambda: isinstance(r.client_id(), int))

note("-- the scripts redis-py registered")
step("script exists", lambda: r.script_exists(a.lua_release.sha, a.lua_extend.sha, a.lua_reacquire.sha))
note("done")

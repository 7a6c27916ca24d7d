"""redlock-py (`redlock.Redlock`), the Python implementation the Redlock
page of Redis's documentation links, used as its users use it.

    python redlock_py.py HOST:PORT HOST:PORT HOST:PORT DEAD:PORT DEAD:PORT

The first three servers answer; the last two addresses have nothing listening
(a master that is down). Prints a deterministic transcript; see
tests/redis/lock_libraries.rs.
"""
import logging
import sys
import time
from importlib.metadata import version

from redis.backoff import NoBackoff
from redis.retry import Retry
from redlock import Lock, MultipleRedlockException, Redlock

from transcript import addrs, note, step, usage

if len(sys.argv) != 6:
    usage("usage: redlock_py.py LIVE LIVE LIVE DEAD DEAD")
# redlock-py logs the errors of its unlock script with the server's address
logging.disable(logging.CRITICAL)
# no retries with backoff (redis-py's default): a master that is down costs a
# refused connection, not seconds
conns = [dict(host=h, port=p, retry=Retry(NoBackoff(), 0)) for h, p in addrs(sys.argv[1:])]
live, dead = conns[:3], conns[3:]
note(f"redlock-py {version('redlock-py')} over redis-py {version('redis')}")

dlm = Redlock(live, retry_count=3, retry_delay=0.05)
once = Redlock(live, retry_count=1, retry_delay=0.05)
servers = dlm.servers


def holders(key):
    return [s.exists(key) for s in servers]


def shown(lock, ttl):
    """A lock as the transcript shows it: no token, its validity as a bound."""
    if not lock:
        return lock
    return f"Lock(resource={lock.resource!r}, validity within 1 s of the ttl: {ttl - 1000 < lock.validity <= ttl})"


TTL = 10000
held = {}


def lock(name, dlm_, resource, ttl):
    """Takes a lock, keeps it under a name, and shows it."""
    held[name] = dlm_.lock(resource, ttl)
    return shown(held[name], ttl)


step("a locks res", lambda: lock("a", dlm, "res", TTL))
step("masters holding it", lambda: holders("res"))
step("pttl near 10 s on each", lambda: [8500 < s.pttl("res") <= 10000 for s in servers])
step("b locks res (3 tries)", lambda: lock("b", dlm, "res", TTL))
step("masters holding it", lambda: holders("res"))
step("a wrong owner unlocks", lambda: dlm.unlock(Lock(0, "res", b"not-the-owner")))
step("masters holding it", lambda: holders("res"))
step("a unlocks", lambda: dlm.unlock(held["a"]))
step("masters holding it", lambda: holders("res"))
step("a unlocks again", lambda: dlm.unlock(held["a"]))
step("b locks res", lambda: lock("b", dlm, "res", TTL))
step("b unlocks", lambda: dlm.unlock(held["b"]))
step("a ttl that is not an integer", lambda: dlm.lock("res", 1.5))

note("-- expiry")
step("c locks ttl for 300 ms", lambda: lock("c", dlm, "ttl", 300))
step("d locks ttl at once (1 try)", lambda: lock("d", once, "ttl", TTL))
time.sleep(0.6)
step("after 600 ms: masters holding it", lambda: holders("ttl"))
step("d locks ttl", lambda: lock("d", once, "ttl", TTL))
step("c unlocks (expired, taken by d)", lambda: dlm.unlock(held["c"]))
step("masters holding it", lambda: holders("ttl"))
step("d unlocks", lambda: dlm.unlock(held["d"]))

note("-- a resource that holds a hash on one master (WRONGTYPE in the unlock script)")
step("hset on the first master", lambda: servers[0].hset("hashed", "field", "value"))
step("e locks hashed", lambda: lock("e", dlm, "hashed", TTL))
step("e unlocks", lambda: dlm.unlock(held["e"]))
step("types", lambda: [s.type("hashed") for s in servers])

note("-- one master of three down")
one_down = Redlock([live[0], live[1], dead[0]], retry_count=3, retry_delay=0.05)
step("lock", lambda: lock("f", one_down, "one-down", TTL))
step("live masters holding it", lambda: holders("one-down"))

note("-- two masters of three down")
two_down = Redlock([live[0], dead[0], dead[1]], retry_count=3, retry_delay=0.05)
step("lock", lambda: lock("g", two_down, "two-down", TTL))
step("live masters holding it", lambda: holders("two-down"))

note("-- a majority held by another owner")
step("h locks on the first two masters", lambda: lock("h", Redlock(live[:2]), "major", TTL))
step("i locks on all three (3 tries)", lambda: lock("i", dlm, "major", TTL))
step("masters holding it", lambda: holders("major"))
note("done")

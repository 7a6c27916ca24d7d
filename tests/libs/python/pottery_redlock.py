"""pottery's `Redlock` (the Redlock algorithm over several masters), used as
its users use it.

    python pottery_redlock.py HOST:PORT HOST:PORT HOST:PORT DEAD:PORT DEAD:PORT

The first three servers answer; the last two addresses have nothing listening
(a master that is down). Prints a deterministic transcript; see
tests/redis/lock_libraries.rs.
"""
import logging
import sys
import time

from importlib.metadata import version
from pottery import Redlock
from pottery.exceptions import PrimitiveError
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from transcript import addrs, note, step, usage

if len(sys.argv) != 6:
    usage("usage: pottery_redlock.py LIVE LIVE LIVE DEAD DEAD")
# pottery logs every error of a master that is down, with its address
logging.disable(logging.CRITICAL)
# no retries with backoff (redis-py's default), so that a master that is down
# costs a refused connection, not seconds
clients = [Redis(host=h, port=p, retry=Retry(NoBackoff(), 0)) for h, p in addrs(sys.argv[1:])]
live, dead = clients[:3], clients[3:]
note(f"pottery {version('pottery')} Redlock")


def lock_step(name, fn):
    """pottery's errors name the masters (addresses, in set order): print the
    class alone."""
    def run():
        try:
            return fn()
        except PrimitiveError as e:
            return f"raises {type(e).__name__}"
    step(name, run)


def holders(key):
    """How many of the live masters hold the key, once pottery's threads that
    finish after quorum are done."""
    time.sleep(0.05)
    return sum(c.exists("redlock:" + key) for c in live)


a = Redlock(key="res", masters=set(live), auto_release_time=10)
b = Redlock(key="res", masters=set(live), auto_release_time=10)
lock_step("a acquires", lambda: a.acquire(blocking=False))
step("masters holding it", lambda: holders("res"))
step("pttl near 10 s on each", lambda: [9000 < c.pttl("redlock:res") <= 10000 for c in live])
lock_step("a locked more than 9 s", lambda: a.locked() > 9)
lock_step("b acquires, no wait", lambda: b.acquire(blocking=False))
lock_step("b acquires, waiting 0.3 s", lambda: b.acquire(timeout=0.3))
lock_step("b locked", b.locked)
lock_step("a extends", a.extend)
lock_step("a extends", a.extend)
lock_step("a extends", a.extend)
lock_step("a extends a fourth time", a.extend)
lock_step("b releases", b.release)
step("masters holding it", lambda: holders("res"))
lock_step("a releases", a.release)
step("masters holding it", lambda: holders("res"))
lock_step("a releases again", a.release)
lock_step("a extends after release", a.extend)
lock_step("a locked", a.locked)

note("-- expiry")
c = Redlock(key="ttl", masters=set(live), auto_release_time=0.3)
d = Redlock(key="ttl", masters=set(live), auto_release_time=10)
lock_step("c acquires, 300 ms", lambda: c.acquire(blocking=False))
lock_step("d acquires at once", lambda: d.acquire(blocking=False))
time.sleep(0.6)
lock_step("after 600 ms: c locked", c.locked)
step("masters holding it", lambda: holders("ttl"))
lock_step("d acquires", lambda: d.acquire(blocking=False))
lock_step("c extends (expired)", c.extend)
lock_step("c releases (expired)", c.release)
lock_step("d releases", d.release)

note("-- context manager")
def held():
    # context_manager_timeout: a lock that cannot be had raises instead of
    # waiting for ever
    with Redlock(key="ctx", masters=set(live), auto_release_time=5, context_manager_timeout=2):
        inside = holders("ctx")
    return (inside, holders("ctx"))
step("holders inside, after", held)

note("-- one master of three down")
e = Redlock(key="one-down", masters={live[0], live[1], dead[0]}, auto_release_time=10)
lock_step("e acquires", lambda: e.acquire(blocking=False))
step("live masters holding it", lambda: holders("one-down"))
lock_step("e locked more than 9 s", lambda: e.locked() > 9)
lock_step("e extends", e.extend)
lock_step("e releases", e.release)
step("live masters holding it", lambda: holders("one-down"))

note("-- two masters of three down")
f = Redlock(key="two-down", masters={live[0], dead[0], dead[1]}, auto_release_time=10)
lock_step("f acquires", lambda: f.acquire(blocking=False))
step("live masters holding it", lambda: holders("two-down"))
g = Redlock(key="two-down", masters={live[0], dead[0], dead[1]}, auto_release_time=10,
            raise_on_redis_errors=True)
lock_step("f acquires, raising on errors", lambda: g.acquire(blocking=False))

note("-- a majority held by another owner")
h = Redlock(key="major", masters={live[0], live[1], dead[0]}, auto_release_time=10)
i = Redlock(key="major", masters=set(live), auto_release_time=10)
lock_step("h acquires on two live masters", lambda: h.acquire(blocking=False))
lock_step("i on all three live masters", lambda: i.acquire(blocking=False))
step("masters holding it", lambda: holders("major"))
lock_step("h releases", h.release)
lock_step("i acquires", lambda: i.acquire(blocking=False))
step("masters holding it", lambda: holders("major"))
lock_step("i releases", i.release)
note("done")

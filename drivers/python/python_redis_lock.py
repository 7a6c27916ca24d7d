"""python-redis-lock's `redis_lock.Lock` under redlock-sim lab: a driver, as a
user writes one.

    pip install python-redis-lock==4.0.0 redis==8.1.0
    redlock-sim lab scenarios/failover_race.toml -- python3 drivers/python/python_redis_lock.py

The lab starts one copy per client, with the scenario in its environment
(REDLOCK_*). Once connected it says READY and waits for the reply, which
starts the run's clock. It loops until REDLOCK_DURATION_MS has passed: think,
take the lock with python-redis-lock, tell the store it holds it (HELD, for
the expiry counted from the lock call less the drift allowance: the library
computes no validity), write to the store REDLOCK_WRITES times over the hold,
tell the store it let go (RELEASED), release. The library offers no check
that the lock is still held (its `locked()` says whether anyone holds it), so
the writes go unchecked, as with redis-py's `Lock`. Its expiry is in whole
seconds (the TTL rounded, at least 1 s); with REDLOCK_RENEW=1 its
`auto_renewal` thread extends it every 2/3 of that, and the driver's `Lock`
(the library's, with `extend` overridden) says HELD after each renewal and,
when one fails (which ends the library's thread), RELEASED at once: the
driver then writes no more.
A waiting `acquire` blocks in BLPOP on the lock's signal list, which the
holder's release pushes to. In the `single` topology it finds the master
through redis-py's `Sentinel`, as a deployment with a sentinel does.
"""
import os
import random
import threading
import time

import redis
import redis_lock
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError
from redis.retry import Retry
from redis.sentinel import Sentinel

env = os.environ
me = env["REDLOCK_CLIENT"]
resource = env["REDLOCK_RESOURCE"]
ttl_ms = int(env["REDLOCK_TTL_MS"])
writes = int(env["REDLOCK_WRITES"])
timeout = int(env["REDLOCK_REQUEST_TIMEOUT_MS"]) / 1000
wait = int(env["REDLOCK_RETRY_COUNT"]) * int(env["REDLOCK_RETRY_DELAY_MS"]) / 1000
duration = int(env["REDLOCK_DURATION_MS"]) / 1000
renew = env.get("REDLOCK_RENEW") == "1"
# python-redis-lock takes whole seconds: the expiry, and the acquire timeout
# (at least 1 s, as 0 would wait for ever; no longer than the expiry
# without auto_renewal, which it refuses).
expire = max(1, round(ttl_ms / 1000))
acquire_timeout = max(1, round(wait)) if renew else min(expire, max(1, round(wait)))


def ms_range(name):
    lo, _, hi = env[name].partition("..")
    return int(lo), int(hi or lo)


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


# The socket must outwait the BLPOP of a waiting acquire; no retries with
# backoff (redis-py's default) on a master that is down.
conn = dict(socket_timeout=timeout + acquire_timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
if "REDLOCK_SENTINEL" in env:
    sentinel = Sentinel([host_port(env["REDLOCK_SENTINEL"])], socket_timeout=timeout)
    r = sentinel.master_for(env["REDLOCK_MASTER_NAME"], **conn)
else:
    host, port = host_port(env["REDLOCK_NODES"].split(",")[0])
    r = redis.Redis(host, port, **conn)
store = redis.Redis(*host_port(env["REDLOCK_STORE"]))
# python-redis-lock keeps the lock under "lock:<name>" (and wakes waiters
# through the list "lock-signal:<name>").
store.execute_command("LOCKKEY", resource, "lock:" + resource)
try:
    # Blocks until every client is ready: the run's clock starts at the reply.
    store.execute_command("READY", me)
except ResponseError:
    pass  # a lab older than READY


def validity_ms(called_at):
    """python-redis-lock computes no validity: what is left for sure is the
    expiry counted from the call, less Redlock's drift allowance (1% + 2 ms)."""
    return int(max(0, expire * 1000 - (time.monotonic() - called_at) * 1000 - (expire * 10 + 2)))


told = threading.Lock()  # the renewal thread talks to the store too


class Lock(redis_lock.Lock):
    """python-redis-lock's Lock, telling the store what its auto_renewal
    thread does (the only caller of `extend` here)."""

    released = False

    def tell(self, command, *args):
        with told:
            if not self.released:  # nothing after RELEASED
                self.released = command == "RELEASED"
                store.execute_command(command, me, resource, *args)

    def extend(self, expire=None):
        called_at = time.monotonic()
        try:
            super().extend(expire)
        except (redis_lock.NotAcquired, RedisError):
            self.tell("RELEASED")  # the renewal failed: the lock is as good as gone
            raise SystemExit  # ends the renewal thread, as the error does, without a traceback
        self.tell("HELD", validity_ms(called_at))


start = time.monotonic()
time.sleep(int(env["REDLOCK_START_MS"]) / 1000)
while time.monotonic() - start < duration:
    time.sleep(random.uniform(*ms_range("REDLOCK_THINK_MS")) / 1000)
    lock = Lock(r, resource, expire=expire, auto_renewal=renew)
    # The key's EX counts from its SET, which is no earlier than the call.
    called_at = time.monotonic()
    try:
        got = lock.acquire(blocking=True, timeout=acquire_timeout)
    except RedisError:
        got = False  # the master is gone: try again after thinking
    if not got:
        continue
    held_at = time.monotonic()
    # With clients.fencing the store hands out the tokens and refuses stale ones.
    fence = []
    if env.get("REDLOCK_FENCING") == "1":
        fence = [store.execute_command("FENCE", me, resource)]
    validity = validity_ms(called_at)
    lock.tell("HELD", validity)
    if env["REDLOCK_HOLD_MS"] == "validity":
        hold = validity / 1000
    else:
        hold = random.uniform(*ms_range("REDLOCK_HOLD_MS")) / 1000
    for k in range(writes):
        at = hold * k / (writes - 1) if writes > 1 else 0
        time.sleep(max(0, held_at + at - time.monotonic()))
        if lock.released:
            break  # a renewal failed: RELEASED was said
        try:
            store.execute_command("WRITE", me, resource, *fence)
        except ResponseError:
            pass  # REJECTED: a later holder's token came first
    else:  # not lost: hold to the end
        time.sleep(max(0, held_at + hold - time.monotonic()))
    lock.tell("RELEASED")
    try:
        lock.release()
    except (redis_lock.NotAcquired, RedisError):
        pass  # expired, taken by another, or the master is gone

"""pottery's `Redlock` under redlock-sim lab: a driver, as a user writes one.

    pip install pottery==3.0.1 redis==8.1.0
    redlock-sim lab scenarios/crash_restart_immediate.toml -- python3 drivers/python/pottery_redlock.py

The lab starts one copy per client, with the scenario in its environment
(REDLOCK_*). Once connected it says READY and waits for the reply, which
starts the run's clock. It loops until REDLOCK_DURATION_MS has passed: think,
take the lock on the masters (REDLOCK_NODES) with pottery, tell the store it
holds it (HELD, with the validity pottery's `locked()` gives), write to the
store REDLOCK_WRITES times over the hold, asking `locked()` first whether the
lock is still held, tell the store it let go (RELEASED), release. When
`locked()` says 0 (or fails) or an extension fails, it says RELEASED at once
and writes no more. pottery has no watchdog of its own: with REDLOCK_RENEW=1
the driver calls `extend()` when less than two thirds of the TTL are left, and
says HELD again with what `locked()` then gives (pottery allows 3 extensions
per acquisition by default; the driver raises `num_extensions`).
"""
import logging
import os
import random
import time

from pottery import PrimitiveError, Redlock
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError
from redis.retry import Retry

env = os.environ
me = env["REDLOCK_CLIENT"]
resource = env["REDLOCK_RESOURCE"]
ttl_ms = int(env["REDLOCK_TTL_MS"])
writes = int(env["REDLOCK_WRITES"])
timeout = int(env["REDLOCK_REQUEST_TIMEOUT_MS"]) / 1000
wait = int(env["REDLOCK_RETRY_COUNT"]) * int(env["REDLOCK_RETRY_DELAY_MS"]) / 1000
duration = int(env["REDLOCK_DURATION_MS"]) / 1000
renew = env.get("REDLOCK_RENEW") == "1"


def ms_range(name):
    lo, _, hi = env[name].partition("..")
    return int(lo), int(hi or lo)


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


# pottery logs, with a traceback, every error of a master that is down.
logging.getLogger("pottery").setLevel(logging.CRITICAL)
# Fail fast on a master that is down (no retries with backoff, redis-py's
# default), as a lock must not wait on one.
masters = {
    Redis(h, p, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
    for h, p in map(host_port, env["REDLOCK_NODES"].split(","))
}
store = Redis(*host_port(env["REDLOCK_STORE"]))
lock = Redlock(key=resource, masters=masters, auto_release_time=ttl_ms / 1000, num_extensions=1000)
# pottery keeps the lock under "redlock:<key>".
store.execute_command("LOCKKEY", resource, lock.key)
try:
    # Blocks until every client is ready: the run's clock starts at the reply.
    store.execute_command("READY", me)
except ResponseError:
    pass  # a lab older than READY


def validity_ms():
    """pottery's view: the validity left on a majority (seconds), 0 if lost."""
    try:
        return int(lock.locked() * 1000)
    except (PrimitiveError, RedisError):
        return 0


start = time.monotonic()
time.sleep(int(env["REDLOCK_START_MS"]) / 1000)
while time.monotonic() - start < duration:
    time.sleep(random.uniform(*ms_range("REDLOCK_THINK_MS")) / 1000)
    try:
        got = lock.acquire(timeout=wait)
    except (PrimitiveError, RedisError):
        got = False
    if not got:
        continue
    held_at = time.monotonic()
    valid = validity_ms()
    if valid <= 0:
        continue  # lost already: take it again
    # With clients.fencing the store hands out the tokens and refuses stale ones.
    fence = []
    if env.get("REDLOCK_FENCING") == "1":
        fence = [store.execute_command("FENCE", me, resource)]
    store.execute_command("HELD", me, resource, valid)
    if env["REDLOCK_HOLD_MS"] == "validity":
        hold = valid / 1000
    else:
        hold = random.uniform(*ms_range("REDLOCK_HOLD_MS")) / 1000
    for k in range(writes):
        at = hold * k / (writes - 1) if writes > 1 else 0
        time.sleep(max(0, held_at + at - time.monotonic()))
        if k > 0 or renew:
            valid = validity_ms()
            if renew and valid < 2 * ttl_ms / 3:
                try:
                    lock.extend()
                except (PrimitiveError, RedisError):
                    break  # lost
                valid = validity_ms()
                store.execute_command("HELD", me, resource, valid)
            if valid <= 0:
                break  # pottery says the lock is no longer held
        try:
            store.execute_command("WRITE", me, resource, *fence)
        except ResponseError:
            pass  # REJECTED: a later holder's token came first
    else:  # not lost: hold to the end
        time.sleep(max(0, held_at + hold - time.monotonic()))
    store.execute_command("RELEASED", me, resource)
    try:
        lock.release()
    except (PrimitiveError, RedisError):
        pass  # expired, taken by another, or the masters are gone

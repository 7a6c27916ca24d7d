"""redis-py's `Lock` under redlock-sim lab: a driver, as a user writes one.

    pip install redis==8.1.0
    redlock-sim lab scenarios/failover_race.toml -- python3 drivers/python/redis_py_lock.py

The lab starts one copy per client, with the scenario in its environment
(REDLOCK_*). Once connected it says READY and waits for the reply, which
starts the run's clock. It loops until REDLOCK_DURATION_MS has passed: think,
take the lock with redis-py, tell the store it holds it (HELD, for the TTL
counted from the lock call less the drift allowance), write to the store
REDLOCK_WRITES times over the hold, tell it it let go (RELEASED), release.
In the `single` topology it finds the master through redis-py's `Sentinel`,
as a deployment with a sentinel does.
"""
import os
import random
import time

import redis
from redis.exceptions import LockError, RedisError, ResponseError
from redis.sentinel import Sentinel

env = os.environ
me = env["REDLOCK_CLIENT"]
resource = env["REDLOCK_RESOURCE"]
ttl_ms = int(env["REDLOCK_TTL_MS"])
writes = int(env["REDLOCK_WRITES"])
timeout = int(env["REDLOCK_REQUEST_TIMEOUT_MS"]) / 1000
wait = int(env["REDLOCK_RETRY_COUNT"]) * int(env["REDLOCK_RETRY_DELAY_MS"]) / 1000
duration = int(env["REDLOCK_DURATION_MS"]) / 1000


def ms_range(name):
    lo, _, hi = env[name].partition("..")
    return int(lo), int(hi or lo)


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


if "REDLOCK_SENTINEL" in env:
    sentinel = Sentinel([host_port(env["REDLOCK_SENTINEL"])], socket_timeout=timeout)
    r = sentinel.master_for(env["REDLOCK_MASTER_NAME"], socket_timeout=timeout)
else:
    host, port = host_port(env["REDLOCK_NODES"].split(",")[0])
    r = redis.Redis(host, port, socket_timeout=timeout)
store = redis.Redis(*host_port(env["REDLOCK_STORE"]))
# redis-py keeps the lock under the name it is given.
store.execute_command("LOCKKEY", resource, resource)
try:
    # Blocks until every client is ready: the run's clock starts at the reply.
    store.execute_command("READY", me)
except ResponseError:
    pass  # a lab older than READY

start = time.monotonic()
time.sleep(int(env["REDLOCK_START_MS"]) / 1000)
while time.monotonic() - start < duration:
    time.sleep(random.uniform(*ms_range("REDLOCK_THINK_MS")) / 1000)
    lock = r.lock(resource, timeout=ttl_ms / 1000)
    # The key's PX counts from its SET, which is no earlier than the call.
    called_at = time.monotonic()
    try:
        got = lock.acquire(blocking=True, blocking_timeout=wait)
    except RedisError:
        got = False  # the master is gone: try again after thinking
    if not got:
        continue
    held_at = time.monotonic()
    # With clients.fencing the store hands out the tokens and refuses stale ones.
    fence = []
    if env.get("REDLOCK_FENCING") == "1":
        fence = [store.execute_command("FENCE", me, resource)]
    # redis-py computes no validity: what is left for sure is the TTL counted
    # from the call, less Redlock's allowance for clock drift (1% + 2 ms).
    validity = max(0, ttl_ms - (time.monotonic() - called_at) * 1000 - (ttl_ms * 0.01 + 2))
    store.execute_command("HELD", me, resource, int(validity))
    if env["REDLOCK_HOLD_MS"] == "validity":
        hold = validity / 1000
    else:
        hold = random.uniform(*ms_range("REDLOCK_HOLD_MS")) / 1000
    for k in range(writes):
        at = hold * k / (writes - 1) if writes > 1 else 0
        time.sleep(max(0, held_at + at - time.monotonic()))
        try:
            store.execute_command("WRITE", me, resource, *fence)
        except ResponseError:
            pass  # REJECTED: a later holder's token came first
    time.sleep(max(0, held_at + hold - time.monotonic()))
    store.execute_command("RELEASED", me, resource)
    try:
        lock.release()
    except (LockError, RedisError):
        pass  # expired, taken by another, or the master is gone

"""redis-py's `Lock` of old releases (2.9.x, 2.10.x) under redlock-sim lab: a driver.

    python3 -m venv tests/libs/python/.venv-redis-2.9.1
    tests/libs/python/.venv-redis-2.9.1/bin/pip install -r drivers/python/requirements-redis-2.9.1.txt
    redlock-sim lab scenarios/libraries/release_after_pause.toml -- \
        tests/libs/python/.venv-redis-2.9.1/bin/python drivers/python/redis_py_lock_legacy.py

(the same with 2.10.0). It uses only what both APIs have, so the one file runs
both unchanged: `StrictRedis(host, port).lock(name, timeout=secs)`,
`acquire(blocking=False)` and `release()`. 2.9.1 has no `blocking_timeout`, so
the driver polls: `acquire(blocking=False)` every REDLOCK_RETRY_DELAY_MS
(drawn from [d/2, d]), at most REDLOCK_RETRY_COUNT times per lock call.
2.9.1's `Lock` (SETNX of the client's expiry timestamp, GETSET to take over an
expired one, GET then DEL to release) and 2.10.0's `LuaLock` (SET NX PX of a
token, compare-and-delete script) both keep the lock under the name given.

The lab starts one copy per client, with the scenario in its environment
(REDLOCK_*). Once connected it says READY and waits for the reply, which
starts the run's clock. It loops until REDLOCK_DURATION_MS has passed: think,
take the lock, tell the store it holds it (HELD, for what is left of the
timeout since the lock call began), write to the store REDLOCK_WRITES times
over the hold, checking before each write after the first that the timeout
has not run out (neither version tells a holder that its lock is gone), tell
the store it let go (RELEASED, at the hold's end or the timeout's if sooner:
at once when that check finds the timeout run out), release. No Sentinel: one
node (`redlock` topology, 1 node).
"""
import os
import random
import time

import redis

env = os.environ
me = env["REDLOCK_CLIENT"]
resource = env["REDLOCK_RESOURCE"]
ttl_ms = int(env["REDLOCK_TTL_MS"])
writes = int(env["REDLOCK_WRITES"])
timeout = int(env["REDLOCK_REQUEST_TIMEOUT_MS"]) / 1000
tries = max(1, int(env["REDLOCK_RETRY_COUNT"]))
retry_delay = int(env["REDLOCK_RETRY_DELAY_MS"]) / 1000
duration = int(env["REDLOCK_DURATION_MS"]) / 1000


def ms_range(name):
    lo, _, hi = env[name].partition("..")
    return int(lo), int(hi or lo)


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


host, port = host_port(env["REDLOCK_NODES"].split(",")[0])
r = redis.StrictRedis(host, port, socket_timeout=timeout)
store_host, store_port = host_port(env["REDLOCK_STORE"])
store = redis.StrictRedis(store_host, store_port)
# redis-py keeps the lock under the name it is given.
store.execute_command("LOCKKEY", resource, resource)
try:
    # Blocks until every client is ready: the run's clock starts at the reply.
    store.execute_command("READY", me)
except redis.ResponseError:
    pass  # a lab older than READY


def take(lock):
    """Poll `acquire(blocking=False)` (2.9.1's blocking call has no bound).

    Returns when the successful attempt began (the lock runs out no earlier
    than that plus the timeout, in both versions), or None."""
    for attempt in range(tries):
        if attempt:
            time.sleep(random.uniform(retry_delay / 2, retry_delay))
        began = time.monotonic()
        try:
            if lock.acquire(blocking=False):
                return began
        except redis.RedisError:
            pass  # the node did not answer: try again
    return None


start = time.monotonic()
time.sleep(int(env["REDLOCK_START_MS"]) / 1000)
while time.monotonic() - start < duration:
    time.sleep(random.uniform(*ms_range("REDLOCK_THINK_MS")) / 1000)
    lock = r.lock(resource, timeout=ttl_ms / 1000)
    began = take(lock)
    if began is None:
        continue
    held_at = time.monotonic()
    # The lock lasts the timeout from the attempt's start at least, less
    # Redlock's allowance for clock drift (1% + 2 ms).
    valid_until = began + (ttl_ms - (ttl_ms * 0.01 + 2)) / 1000
    # With clients.fencing the store hands out the tokens and refuses stale ones.
    fence = []
    if env.get("REDLOCK_FENCING") == "1":
        fence = [store.execute_command("FENCE", me, resource)]
    store.execute_command("HELD", me, resource, max(0, int((valid_until - time.monotonic()) * 1000)))
    if env["REDLOCK_HOLD_MS"] == "validity":
        hold = ttl_ms / 1000
    else:
        hold = random.uniform(*ms_range("REDLOCK_HOLD_MS")) / 1000
    for k in range(writes):
        at = hold * k / (writes - 1) if writes > 1 else 0
        time.sleep(max(0, held_at + at - time.monotonic()))
        if k > 0 and time.monotonic() >= valid_until:
            break  # the timeout ran out (a pause): write no more
        try:
            store.execute_command("WRITE", me, resource, *fence)
        except redis.ResponseError:
            pass  # REJECTED: a later holder's token came first
    time.sleep(max(0, min(held_at + hold, valid_until) - time.monotonic()))
    store.execute_command("RELEASED", me, resource)
    try:
        lock.release()
    except Exception:
        pass  # 2.9.1: ValueError; 2.10.0: LockError (no longer owned); or the node is gone

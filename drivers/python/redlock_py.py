"""redlock-py's `Redlock` (PyPI `redlock-py`, module `redlock`) under
redlock-sim lab: a driver, as a user writes one.

    pip install redlock-py==1.0.8 redis==8.1.0
    redlock-sim lab scenarios/crash_restart_immediate.toml -- python3 drivers/python/redlock_py.py

The lab starts one copy per client, with the scenario in its environment
(REDLOCK_*). Once connected it says READY and waits for the reply, which
starts the run's clock. It loops until REDLOCK_DURATION_MS has passed: think,
take the lock on the masters (REDLOCK_NODES) with redlock-py, tell the store it
holds it (HELD, with the validity redlock-py computed), write to the store
REDLOCK_WRITES times over the hold, checking first that the validity has not
run out, tell the store it let go (RELEASED), release. When the validity has
run out, it says RELEASED at once and writes no more. redlock-py cannot
extend a lock: REDLOCK_RENEW is ignored.
"""
import logging
import os
import random
import time

from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError
from redis.retry import Retry
from redlock import MultipleRedlockException, Redlock

env = os.environ
me = env["REDLOCK_CLIENT"]
resource = env["REDLOCK_RESOURCE"]
ttl_ms = int(env["REDLOCK_TTL_MS"])
writes = int(env["REDLOCK_WRITES"])
timeout = int(env["REDLOCK_REQUEST_TIMEOUT_MS"]) / 1000
duration = int(env["REDLOCK_DURATION_MS"]) / 1000


def ms_range(name):
    lo, _, hi = env[name].partition("..")
    return int(lo), int(hi or lo)


def host_port(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


# redlock-py logs, with a traceback, every error of its unlock script.
logging.disable(logging.CRITICAL)
# Fail fast on a master that is down (no retries with backoff, redis-py's
# default), as a lock must not wait on one.
dlm = Redlock(
    [
        dict(host=h, port=p, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))
        for h, p in map(host_port, env["REDLOCK_NODES"].split(","))
    ],
    retry_count=int(env["REDLOCK_RETRY_COUNT"]),
    retry_delay=int(env["REDLOCK_RETRY_DELAY_MS"]) / 1000,
)
store = Redis(*host_port(env["REDLOCK_STORE"]))
# redlock-py keeps the lock under the name it is given.
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
    try:
        lock = dlm.lock(resource, ttl_ms)
    except MultipleRedlockException:
        # A majority said yes but some master failed: redlock-py raises and
        # keeps the Lock to itself, so there is nothing to hold or release.
        lock = False
    if not lock:
        continue
    held_at = time.monotonic()
    valid_until = held_at + lock.validity / 1000
    # With clients.fencing the store hands out the tokens and refuses stale ones.
    fence = []
    if env.get("REDLOCK_FENCING") == "1":
        fence = [store.execute_command("FENCE", me, resource)]
    store.execute_command("HELD", me, resource, lock.validity)
    if env["REDLOCK_HOLD_MS"] == "validity":
        hold = lock.validity / 1000
    else:
        hold = random.uniform(*ms_range("REDLOCK_HOLD_MS")) / 1000
    for k in range(writes):
        at = hold * k / (writes - 1) if writes > 1 else 0
        time.sleep(max(0, held_at + at - time.monotonic()))
        if k > 0 and time.monotonic() >= valid_until:
            break  # the validity redlock-py computed is over
        try:
            store.execute_command("WRITE", me, resource, *fence)
        except ResponseError:
            pass  # REJECTED: a later holder's token came first
    else:  # not lost: hold to the end
        time.sleep(max(0, held_at + hold - time.monotonic()))
    store.execute_command("RELEASED", me, resource)
    try:
        dlm.unlock(lock)
    except MultipleRedlockException:
        pass  # a master is gone; the others were asked

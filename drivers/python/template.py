"""A template driver for `redlock-sim lab`: copy it to judge YOUR lock library.

    redlock-sim lab scenarios/gc_pause.toml -- python3 drivers/python/template.py

It speaks the driver protocol (docs/lab.md): the environment, LOCKKEY, READY,
the loop, FENCE, HELD (after the lock and after every renewal), WRITE with a
check before each write after the first, RELEASED the moment the lock is
lost. Its lock is a placeholder: the simplest correct lock on one Redis, with
redis-py (`SET key token NX PX ttl`, a compare-and-delete script), on the
first node of REDLOCK_NODES, or in `single` on the master the sentinel names.
Replace the five functions marked `YOUR LIBRARY` (and KEY); the rest needs no
change. Needs redis-py (`pip install redis`).
"""
import os
import random
import time
import uuid

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

env = os.environ
me, resource = env["REDLOCK_CLIENT"], env["REDLOCK_RESOURCE"]
ttl_ms, writes = int(env["REDLOCK_TTL_MS"]), int(env["REDLOCK_WRITES"])
timeout = int(env["REDLOCK_REQUEST_TIMEOUT_MS"]) / 1000
fast = dict(socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))  # fail fast
renew = env["REDLOCK_RENEW"] == "1"


def draw(name):  # seconds, drawn from REDLOCK_X_MS = "A..B" (or "A")
    lo, _, hi = env[name].partition("..")
    return random.uniform(int(lo), int(hi or lo)) / 1000


def client(addr, **options):
    host, port = addr.rsplit(":", 1)
    return redis.Redis(host, int(port), **options)


# ---- YOUR LIBRARY: connect, lock, check, extend, unlock (errors: raise) ----
KEY = resource  # the key your library keeps the lock under (LOCKKEY below)
EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
nodes, sentinel = {}, None


def connect():  # YOUR LIBRARY: connect (the master, asked of the sentinel in `single`)
    addr = env["REDLOCK_NODES"].split(",")[0]
    if "REDLOCK_SENTINEL" in env:
        global sentinel
        sentinel = sentinel or client(env["REDLOCK_SENTINEL"], decode_responses=True, **fast)
        addr = ":".join(sentinel.execute_command("SENTINEL", "get-master-addr-by-name", env["REDLOCK_MASTER_NAME"]))
    return nodes.setdefault(addr, client(addr, **fast))


def lock():  # YOUR LIBRARY: lock (one try): a handle, or None when taken
    node, token = connect(), uuid.uuid4().hex
    return (node, token) if node.set(KEY, token, nx=True, px=ttl_ms) else None


def check(handle):  # YOUR LIBRARY: check: does it still hold the lock?
    node, token = handle
    return node.get(KEY) == token.encode()


def extend(handle):  # YOUR LIBRARY: extend by a TTL (REDLOCK_RENEW=1): False when lost
    node, token = handle
    return node.eval(EXTEND, 1, KEY, token, ttl_ms) == 1


def unlock(handle):  # YOUR LIBRARY: unlock
    node, token = handle
    node.eval(UNLOCK, 1, KEY, token)


# ---- The protocol: nothing to change below. ----
def validity(called_at):  # what is left for sure: the TTL from the call, less 1% + 2 ms
    return int(max(0, ttl_ms - (time.monotonic() - called_at) * 1000 - (ttl_ms * 0.01 + 2)))


def holding(handle, called_at, until):
    """Sleeps until `until`, renewing every ttl/3 with REDLOCK_RENEW=1 (HELD after
    each); the last renewal's call time, or None when one failed (lost)."""
    while (now := time.monotonic()) < until:
        due = called_at + ttl_ms / 3000 if renew else until
        if due <= now:
            called_at = time.monotonic()
            try:
                if not extend(handle):
                    return None
            except redis.RedisError:
                return None
            store.execute_command("HELD", me, resource, validity(called_at))
        time.sleep(max(0, min(due, until) - time.monotonic()))
    return called_at


store = client(env["REDLOCK_STORE"])  # no timeout: READY waits for every client
store.execute_command("LOCKKEY", resource, KEY)
try:
    store.execute_command("READY", me)  # the run's clock starts at the reply
except redis.ResponseError:
    pass  # a lab older than READY
start = time.monotonic()
time.sleep(int(env["REDLOCK_START_MS"]) / 1000)
while time.monotonic() - start < int(env["REDLOCK_DURATION_MS"]) / 1000:
    time.sleep(draw("REDLOCK_THINK_MS"))
    handle = None
    for attempt in range(max(1, int(env["REDLOCK_RETRY_COUNT"]))):
        time.sleep(int(env["REDLOCK_RETRY_DELAY_MS"]) / 1000 if attempt else 0)
        called_at = time.monotonic()  # the key's TTL counts from no earlier
        try:
            if handle := lock():
                break
        except redis.RedisError:
            pass  # the server is gone: a failed try
    if not handle:
        continue
    held_at = time.monotonic()
    fence = [store.execute_command("FENCE", me, resource)] if env.get("REDLOCK_FENCING") == "1" else []
    valid = validity(called_at)
    store.execute_command("HELD", me, resource, valid)
    hold = valid / 1000 if env["REDLOCK_HOLD_MS"] == "validity" else draw("REDLOCK_HOLD_MS")
    for k in range(writes):
        called_at = holding(handle, called_at, held_at + (hold * k / (writes - 1) if writes > 1 else 0))
        try:
            if called_at is None or (k > 0 and not check(handle)):
                break  # lost: RELEASED now, no more writes
        except redis.RedisError:
            break  # the check failed: taken as a loss
        try:
            store.execute_command("WRITE", me, resource, *fence)
        except redis.ResponseError:
            pass  # REJECTED: a later holder's fencing token came first
    else:
        holding(handle, called_at, held_at + hold)
    store.execute_command("RELEASED", me, resource)
    try:
        unlock(handle)
    except redis.RedisError:
        pass  # expired, or the server is gone

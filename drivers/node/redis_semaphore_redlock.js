// redis-semaphore's `RedlockMutex` (the Redlock algorithm over several
// masters) on ioredis under redlock-sim lab: a driver, as a user writes one.
//
//     npm install redis-semaphore@5.8.0 ioredis@5.9.3
//     redlock-sim lab scenarios/crash_restart_immediate.toml -- node drivers/node/redis_semaphore_redlock.js
//
// The lab starts one copy per client, with the scenario in its environment
// (REDLOCK_*). Once connected it says READY and waits for the reply, which
// starts the run's clock. It loops until REDLOCK_DURATION_MS has passed:
// think, take the lock on the masters (REDLOCK_NODES) with redis-semaphore,
// tell the store it holds it (HELD, for the TTL counted from the lock call
// less the drift allowance: redis-semaphore computes no validity), write to
// the store REDLOCK_WRITES times over the hold, checking first that
// redis-semaphore still holds it (`isAcquired`), tell the store it let go
// (RELEASED), release. redis-semaphore refreshes the lock on its own (every
// 0.8 × lockTimeout, its default; every ttl/3 with REDLOCK_RENEW=1): each
// refresh that succeeds is a new HELD (the mutex's `_refresh`, wrapped, is
// the refresh timer's only trace), and when one finds the lock on less than
// a majority it calls `onLockLost`, which says RELEASED at once; the driver
// then writes no more.
"use strict";
const Redis = require("ioredis");
const { RedlockMutex } = require("redis-semaphore");

const env = process.env;
const me = env.REDLOCK_CLIENT;
const resource = env.REDLOCK_RESOURCE;
const ttl = Number(env.REDLOCK_TTL_MS);
const writes = Number(env.REDLOCK_WRITES);
const timeout = Number(env.REDLOCK_REQUEST_TIMEOUT_MS);
const duration = Number(env.REDLOCK_DURATION_MS);
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const range = (name) => {
  const [lo, hi] = env[name].split("..").map(Number);
  return lo + Math.random() * ((hi ?? lo) - lo);
};
const hostPort = (addr) => {
  const [host, port] = addr.split(":");
  return { host, port: Number(port) };
};

async function main() {
  const nodes = env.REDLOCK_NODES.split(",").map((addr) => {
    // Fail fast on a master that is down, as a lock must not wait on one.
    const node = new Redis({ ...hostPort(addr), commandTimeout: timeout, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    node.on("error", () => {}); // a master that is down: the quorum decides
    return node;
  });
  const store = new Redis(hostPort(env.REDLOCK_STORE));
  const options = {
    lockTimeout: ttl,
    acquireTimeout: Number(env.REDLOCK_RETRY_COUNT) * Number(env.REDLOCK_RETRY_DELAY_MS),
    retryInterval: Number(env.REDLOCK_RETRY_DELAY_MS),
    ...(env.REDLOCK_RENEW === "1" ? { refreshInterval: Math.round(ttl / 3) } : {}),
  };
  // redis-semaphore keeps the lock under "mutex:<key>".
  await store.call("LOCKKEY", resource, `mutex:${resource}`);
  // Blocks until every client is ready: the run's clock starts at the reply.
  await store.call("READY", me).catch(() => {}); // an error: a lab older than READY
  // What is left of the lock for sure after a call that set its PX at
  // `calledAt`: the TTL counted from the call, not from its return, less
  // Redlock's allowance for clock drift (1% + 2 ms).
  const validFrom = (calledAt) => Math.max(0, ttl - (Date.now() - calledAt) - (ttl * 0.01 + 2));
  const start = Date.now();
  await sleep(Number(env.REDLOCK_START_MS));
  while (Date.now() - start < duration) {
    await sleep(range("REDLOCK_THINK_MS"));
    // RELEASED, once: when onLockLost is called, or at the hold's end.
    let released = null;
    const release = () => (released ??= store.call("RELEASED", me, resource));
    const mutex = new RedlockMutex(nodes, resource, { ...options, onLockLost: release });
    // Each refresh of the timer that succeeds: HELD, for the TTL from its call.
    const refresh = mutex._refresh.bind(mutex);
    mutex._refresh = async () => {
      const calledAt = Date.now();
      const ok = await refresh();
      if (ok && !released) await store.call("HELD", me, resource, validFrom(calledAt));
      return ok;
    };
    // The keys' PX counts from their SET, which is no earlier than the call.
    const calledAt = Date.now();
    if (!(await mutex.tryAcquire().catch(() => false))) continue;
    const heldAt = Date.now();
    // With clients.fencing the store hands out the tokens and refuses stale ones.
    const fence = env.REDLOCK_FENCING === "1" ? [await store.call("FENCE", me, resource)] : [];
    const validity = validFrom(calledAt);
    await store.call("HELD", me, resource, validity);
    const hold = env.REDLOCK_HOLD_MS === "validity" ? validity : range("REDLOCK_HOLD_MS");
    for (let k = 0; k < writes; k++) {
      await sleep(heldAt + (writes > 1 ? (hold * k) / (writes - 1) : 0) - Date.now());
      if (k > 0 && !mutex.isAcquired) break; // a refresh found it gone: onLockLost said RELEASED
      await store.call("WRITE", me, resource, ...fence).catch((e) => {
        if (!String(e.message).startsWith("REJECTED")) throw e; // REJECTED: a later holder's token came first
      });
    }
    if (!released) await sleep(heldAt + hold - Date.now());
    await release();
    await mutex.release().catch(() => {});
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

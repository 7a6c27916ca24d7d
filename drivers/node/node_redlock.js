// node-redlock (redlock 5) over ioredis under redlock-sim lab: a driver, as
// a user writes one.
//
//     npm install redlock@5.0.0-beta.2 ioredis@5.9.3
//     redlock-sim lab scenarios/crash_restart_immediate.toml -- node drivers/node/node_redlock.js
//
// The lab starts one copy per client, with the scenario in its environment
// (REDLOCK_*). Once connected it says READY and waits for the reply, which
// starts the run's clock. It loops until REDLOCK_DURATION_MS has passed:
// think, take the lock on every node with node-redlock, tell the store it
// holds it (HELD, with the validity node-redlock computed), write to the
// store REDLOCK_WRITES times over the hold, checking first that the lock has
// not expired, tell the store it let go (RELEASED), release. With
// REDLOCK_RENEW=1 it extends the lock before a write once less than 2/3 of
// the TTL is left, and says HELD again with the validity of the extension.
// When the lock has expired or an extension fails, it says RELEASED at once
// and writes no more.
"use strict";
const Redis = require("ioredis");
const { default: Redlock } = require("redlock");

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
const connect = (addr) => {
  const [host, port] = addr.split(":");
  // Fail fast on a node that is down, as a lock must not wait on one.
  return new Redis({ host, port: Number(port), commandTimeout: timeout, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
};

async function main() {
  const nodes = env.REDLOCK_NODES.split(",").map(connect);
  const redlock = new Redlock(nodes, {
    retryCount: Number(env.REDLOCK_RETRY_COUNT) - 1,
    retryDelay: Number(env.REDLOCK_RETRY_DELAY_MS),
    retryJitter: Number(env.REDLOCK_RETRY_DELAY_MS) / 2,
  });
  redlock.on("error", () => {}); // a node that is down: the quorum decides
  const [host, port] = env.REDLOCK_STORE.split(":");
  const store = new Redis({ host, port: Number(port) });
  // node-redlock keeps the lock under the name it is given.
  await store.call("LOCKKEY", resource, resource);
  // Blocks until every client is ready: the run's clock starts at the reply.
  await store.call("READY", me).catch(() => {}); // an error: a lab older than READY
  const start = Date.now();
  await sleep(Number(env.REDLOCK_START_MS));
  while (Date.now() - start < duration) {
    await sleep(range("REDLOCK_THINK_MS"));
    let lock;
    try {
      lock = await redlock.acquire([resource], ttl);
    } catch (e) {
      continue;
    }
    const heldAt = Date.now();
    await store.call("HELD", me, resource, Math.max(0, lock.expiration - Date.now()));
    const hold = env.REDLOCK_HOLD_MS === "validity" ? lock.expiration - heldAt : range("REDLOCK_HOLD_MS");
    let lost = false; // node-redlock said the lock is gone
    for (let k = 0; k < writes; k++) {
      await sleep(heldAt + (writes > 1 ? (hold * k) / (writes - 1) : 0) - Date.now());
      if (env.REDLOCK_RENEW === "1" && lock.expiration - Date.now() < (2 * ttl) / 3) {
        try {
          lock = await lock.extend(ttl);
          await store.call("HELD", me, resource, Math.max(0, lock.expiration - Date.now()));
        } catch (e) {
          lost = true; // the extension failed
          break;
        }
      }
      if (k > 0 && Date.now() >= lock.expiration) {
        lost = true; // expired
        break;
      }
      await store.call("WRITE", me, resource);
    }
    if (!lost) await sleep(heldAt + hold - Date.now());
    await store.call("RELEASED", me, resource);
    await lock.release().catch(() => {});
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

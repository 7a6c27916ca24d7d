// A template driver for `redlock-sim lab`: copy it to judge YOUR lock library.
//
//     redlock-sim lab scenarios/gc_pause.toml -- node drivers/node/template.js
//
// It speaks the driver protocol (docs/lab.md): the environment, LOCKKEY,
// READY, the loop, FENCE, HELD (after the lock and after every renewal),
// WRITE with a check before each write after the first, RELEASED the moment
// the lock is lost. Its lock is a placeholder: the simplest correct lock on
// one Redis, with ioredis (`SET key token NX PX ttl`, a compare-and-delete
// script), on the first node of REDLOCK_NODES, or in `single` on the master
// the sentinel names. Replace the five functions marked `YOUR LIBRARY` (and
// KEY); the rest needs no change. Needs ioredis (`npm install ioredis`).
"use strict";
const Redis = require("ioredis");
const { randomBytes } = require("crypto");

const env = process.env;
const [me, resource] = [env.REDLOCK_CLIENT, env.REDLOCK_RESOURCE];
const [ttl, writes] = [Number(env.REDLOCK_TTL_MS), Number(env.REDLOCK_WRITES)];
const timeout = Number(env.REDLOCK_REQUEST_TIMEOUT_MS);
const renew = env.REDLOCK_RENEW === "1";
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const draw = (name) => { // ms, drawn from REDLOCK_X_MS = "A..B" (or "A")
  const [lo, hi] = env[name].split("..").map(Number);
  return lo + Math.random() * ((hi ?? lo) - lo);
};
const client = (addr, options) => {
  const i = addr.lastIndexOf(":");
  return new Redis({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)), ...options });
};

// ---- YOUR LIBRARY: connect, lock, check, extend, unlock (errors: throw) ----
const KEY = resource; // the key your library keeps the lock under (LOCKKEY below)
const EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
const UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
// Fail fast while a server is down, as a lock must not wait on one.
const fast = { commandTimeout: timeout, connectTimeout: timeout, enableOfflineQueue: false, maxRetriesPerRequest: 0 };
const nodes = new Map();
const sentinel = env.REDLOCK_SENTINEL && client(env.REDLOCK_SENTINEL, { commandTimeout: timeout }).on("error", () => {});
async function connect() { // YOUR LIBRARY: connect (the master, asked of the sentinel in `single`)
  let addr = env.REDLOCK_NODES.split(",")[0];
  if (sentinel) addr = (await sentinel.call("SENTINEL", "get-master-addr-by-name", env.REDLOCK_MASTER_NAME)).join(":");
  if (!nodes.has(addr)) {
    const node = client(addr, { ...fast, lazyConnect: true }).on("error", () => {}); // ioredis reconnects
    await node.connect().catch((e) => (node.disconnect(), Promise.reject(e)));
    nodes.set(addr, node);
  }
  return nodes.get(addr);
}
async function lock() { // YOUR LIBRARY: lock (one try): a handle, or null when taken
  const [node, token] = [await connect(), randomBytes(16).toString("hex")];
  return (await node.set(KEY, token, "PX", ttl, "NX")) === "OK" ? { node, token } : null;
}
async function check({ node, token }) { // YOUR LIBRARY: check: does it still hold the lock?
  return (await node.get(KEY)) === token;
}
async function extend({ node, token }) { // YOUR LIBRARY: extend by a TTL (REDLOCK_RENEW=1): false when lost
  return (await node.eval(EXTEND, 1, KEY, token, ttl)) === 1;
}
async function unlock({ node, token }) { // YOUR LIBRARY: unlock
  await node.eval(UNLOCK, 1, KEY, token);
}

// ---- The protocol: nothing to change below. ----
async function main() {
  const store = client(env.REDLOCK_STORE); // no timeout: READY waits for every client
  await store.call("LOCKKEY", resource, KEY);
  await store.call("READY", me).catch(() => {}); // an error: a lab older than READY
  // What is left for sure: the TTL counted from the call, less 1% + 2 ms.
  const validity = (calledAt) => Math.round(Math.max(0, ttl - (Date.now() - calledAt) - (ttl * 0.01 + 2)));
  // Sleeps until `until`, renewing every ttl/3 with REDLOCK_RENEW=1 (HELD
  // after each); the last renewal's call time, or null when one failed (lost).
  const holding = async (handle, calledAt, until) => {
    for (let now; (now = Date.now()) < until; ) {
      const due = renew ? calledAt + ttl / 3 : until;
      if (due <= now) {
        calledAt = Date.now();
        if (!(await extend(handle).catch(() => false))) return null;
        await store.call("HELD", me, resource, validity(calledAt));
      }
      await sleep(Math.min(due, until) - Date.now());
    }
    return calledAt;
  };
  const start = Date.now(); // the run's clock starts at READY's reply
  await sleep(Number(env.REDLOCK_START_MS));
  while (Date.now() - start < Number(env.REDLOCK_DURATION_MS)) {
    await sleep(draw("REDLOCK_THINK_MS"));
    let [handle, calledAt] = [null, 0];
    for (let attempt = 0; attempt < Math.max(1, Number(env.REDLOCK_RETRY_COUNT)) && !handle; attempt++) {
      await sleep(attempt ? Number(env.REDLOCK_RETRY_DELAY_MS) : 0);
      calledAt = Date.now(); // the key's TTL counts from no earlier
      handle = await lock().catch(() => null); // the server is gone: a failed try
    }
    if (!handle) continue;
    const heldAt = Date.now();
    const fence = env.REDLOCK_FENCING === "1" ? [await store.call("FENCE", me, resource)] : [];
    const valid = validity(calledAt);
    await store.call("HELD", me, resource, valid);
    const hold = env.REDLOCK_HOLD_MS === "validity" ? valid : draw("REDLOCK_HOLD_MS");
    let lost = false;
    for (let k = 0; k < writes && !lost; k++) {
      calledAt = await holding(handle, calledAt, heldAt + (writes > 1 ? (hold * k) / (writes - 1) : 0));
      // A failed renewal, or the check says it is gone (or fails): lost.
      lost = calledAt === null || (k > 0 && !(await check(handle).catch(() => false)));
      if (!lost) {
        await store.call("WRITE", me, resource, ...fence).catch((e) => {
          if (!String(e.message).startsWith("REJECTED")) throw e; // REJECTED: a later holder's fence came first
        });
      }
    }
    if (!lost) await holding(handle, calledAt, heldAt + hold);
    await store.call("RELEASED", me, resource); // at once when lost
    await unlock(handle).catch(() => {}); // expired, or the server is gone
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

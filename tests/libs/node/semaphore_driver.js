// redis-semaphore's `Mutex` and `RedlockMutex` over ioredis, used as their
// users use them.
//
//     node semaphore_driver.js LIVE LIVE LIVE DEAD DEAD
//
// The first three addresses are servers that answer; nothing listens on the
// last two (masters that are down). Prints a deterministic transcript; see
// tests/redis/lock_libraries.rs.
"use strict";
const { Mutex, RedlockMutex } = require("redis-semaphore");
const { step, note, sleep, live, dead, describe, usage, version } = require("./transcript");

async function main() {
  if (process.argv.length !== 7) usage("usage: semaphore_driver.js LIVE LIVE LIVE DEAD DEAD");
  const args = process.argv.slice(2);
  const up = await Promise.all(args.slice(0, 3).map(live));
  const down = args.slice(3).map(dead);
  const c = up[0];
  note(`redis-semaphore ${version("redis-semaphore")} over ioredis ${version("ioredis")}`);
  const quick = { lockTimeout: 10000, acquireTimeout: 300, retryInterval: 20, refreshInterval: 0 };
  const near = async (key, lo, hi) => { const t = await c.pttl(key); return t > lo && t <= hi; };

  note("-- the connection");
  await step("client setname", () => c.client("SETNAME", "mutex-worker"));
  await step("client getname", () => c.client("GETNAME"));
  await step("client id is an integer", async () => Number.isInteger(await c.client("ID")));

  note("-- Mutex on one server");
  const a = new Mutex(c, "res", quick);
  const b = new Mutex(c, "res", quick);
  await step("a acquires", () => a.acquire());
  await step("a isAcquired", () => a.isAcquired);
  await step("key type", () => c.type("mutex:res"));
  await step("pttl near 10 s", () => near("mutex:res", 8500, 10000));
  await step("b tryAcquire (300 ms)", () => b.tryAcquire());
  await step("b acquire (300 ms)", () => b.acquire());
  await step("b releases (never held)", () => b.release());
  await step("key still there", () => c.exists("mutex:res"));
  await step("a releases", () => a.release());
  await step("key gone", () => c.exists("mutex:res"));
  await step("b acquires", () => b.acquire());
  await step("b releases", () => b.release());

  note("-- identifier shared between processes (acquiredExternally)");
  const owner = new Mutex(c, "ext", { ...quick, identifier: "job-42" });
  await step("owner acquires", () => owner.acquire());
  const same = new Mutex(c, "ext", { ...quick, identifier: "job-42", acquiredExternally: true });
  await step("same identifier takes it over", () => same.tryAcquire());
  const other = new Mutex(c, "ext", { ...quick, identifier: "job-7", acquiredExternally: true });
  await step("other identifier takes it over", () => other.tryAcquire());
  await step("other identifier releases", () => other.release());
  await step("key still there", () => c.exists("mutex:ext"));
  await step("value", () => c.get("mutex:ext"));
  await step("same identifier releases", () => same.release());
  await step("key gone", () => c.exists("mutex:ext"));

  note("-- refresh keeps a short lock");
  const r = new Mutex(c, "refresh", { lockTimeout: 600, refreshInterval: 100, acquireTimeout: 300, retryInterval: 20 });
  await step("acquire, lockTimeout 600 ms, refresh every 100 ms", () => r.acquire());
  await sleep(1200);
  await step("after 1200 ms: isAcquired", () => r.isAcquired);
  await step("key there", () => c.exists("mutex:refresh"));
  await step("pttl at most 600", () => near("mutex:refresh", 0, 600));
  await step("release", () => r.release());
  await step("key gone", () => c.exists("mutex:refresh"));

  note("-- lock lost");
  let lost = "not called";
  const l = new Mutex(c, "lost", {
    lockTimeout: 1000, refreshInterval: 100, acquireTimeout: 300, retryInterval: 20,
    onLockLost: (e) => { lost = describe(e); },
  });
  await step("acquire", () => l.acquire());
  await step("another client deletes the key", () => c.del("mutex:lost"));
  await sleep(300);
  await step("onLockLost", () => lost);
  await step("isAcquired", () => l.isAcquired);
  await step("release", () => l.release());

  note("-- expiry");
  const e = new Mutex(c, "ttl", { ...quick, lockTimeout: 300 });
  const f = new Mutex(c, "ttl", { ...quick, acquireTimeout: 50 });
  await step("e acquires, 300 ms", () => e.acquire());
  await step("f tryAcquire (50 ms)", () => f.tryAcquire());
  await sleep(600);
  await step("after 600 ms: key there", () => c.exists("mutex:ttl"));
  await step("f tryAcquire", () => f.tryAcquire());
  await step("e releases (expired, taken by f)", () => e.release());
  await step("key still there (f's)", () => c.exists("mutex:ttl"));
  await step("f releases", () => f.release());

  const onAll = (key) => Promise.all(up.map((x) => x.exists(key)));
  note("-- RedlockMutex on three servers");
  const g = new RedlockMutex(up, "red", quick);
  const h = new RedlockMutex(up, "red", quick);
  await step("g acquires", () => g.acquire());
  await step("on each master", () => onAll("mutex:red"));
  await step("h tryAcquire (300 ms)", () => h.tryAcquire());
  await step("h acquire (300 ms)", () => h.acquire());
  await step("g releases", () => g.release());
  await step("on each master", () => onAll("mutex:red"));
  await step("h acquires", () => h.acquire());
  await step("h releases", () => h.release());

  note("-- RedlockMutex, one master of three down");
  const i = new RedlockMutex([up[0], up[1], down[0]], "one-down", quick);
  await step("acquire", () => i.acquire());
  await step("live masters holding it", () => onAll("mutex:one-down"));
  await step("release", () => i.release());
  await step("live masters holding it", () => onAll("mutex:one-down"));

  note("-- RedlockMutex, two masters of three down");
  const j = new RedlockMutex([up[0], down[0], down[1]], "two-down", quick);
  await step("tryAcquire (300 ms)", () => j.tryAcquire());
  await step("live masters holding it", () => onAll("mutex:two-down"));

  note("-- RedlockMutex, a majority held by another owner");
  const k = new RedlockMutex([up[0], up[1], down[0]], "major", quick);
  const m = new RedlockMutex(up, "major", quick);
  await step("k acquires on two live masters", () => k.acquire());
  await step("m tryAcquire on all three (300 ms)", () => m.tryAcquire());
  await step("live masters holding it", () => onAll("mutex:major"));
  await step("k releases", () => k.release());
  await step("m acquires", () => m.acquire());
  await step("m releases", () => m.release());
  note("done");
  for (const x of up) await x.quit();
  for (const x of down) x.disconnect();
}

main().catch((e) => {
  console.log(`driver failed: ${describe(e)}`);
  process.exit(1);
});

// redis-semaphore's `Semaphore` (a counting semaphore: a sorted set of
// holders scored by the time of their last refresh) over ioredis, used as
// its users use it.
//
//     node counting_semaphore_driver.js LIVE
//
// Prints a deterministic transcript; see tests/redis/lock_libraries.rs.
"use strict";
const { Semaphore, MultiSemaphore } = require("redis-semaphore");
const { step, note, sleep, live, describe, usage, version } = require("./transcript");

async function main() {
  if (process.argv.length !== 3) usage("usage: counting_semaphore_driver.js LIVE");
  const c = await live(process.argv[2]);
  note(`redis-semaphore ${version("redis-semaphore")} Semaphore over ioredis ${version("ioredis")}`);
  const quick = { lockTimeout: 10000, acquireTimeout: 300, retryInterval: 20, refreshInterval: 0 };
  const holders = () => c.zrange("semaphore:sem", 0, -1);

  note("-- two permits, three clients");
  const a = new Semaphore(c, "sem", 2, { ...quick, identifier: "a" });
  const b = new Semaphore(c, "sem", 2, { ...quick, identifier: "b" });
  const x = new Semaphore(c, "sem", 2, { ...quick, identifier: "x" });
  await step("a acquires", () => a.acquire());
  await step("b acquires", () => b.acquire());
  await step("key type", () => c.type("semaphore:sem"));
  await step("holders", holders);
  await step("x tryAcquire (300 ms)", () => x.tryAcquire());
  await step("x acquire (300 ms)", () => x.acquire());
  await step("a releases", () => a.release());
  await step("holders", holders);
  await step("x acquires", () => x.acquire());
  await step("holders", holders);
  await step("pttl above 9 s", async () => (await c.pttl("semaphore:sem")) > 9000);
  await step("b releases", () => b.release());
  await step("x releases", () => x.release());
  await step("key gone", () => c.exists("semaphore:sem"));

  note("-- a holder that stops refreshing is dropped when its time is up");
  // 1.5 s: t's first try must come while s holds, on a loaded machine too
  // (300 ms was not enough beside the simulation's tests).
  const s = new Semaphore(c, "short", 1, { ...quick, lockTimeout: 1500, identifier: "s" });
  const t = new Semaphore(c, "short", 1, { ...quick, identifier: "t" });
  await step("s acquires, 1500 ms", () => s.acquire());
  await step("t tryAcquire", () => t.tryAcquire());
  await sleep(1700);
  await step("after 1700 ms: t tryAcquire", () => t.tryAcquire());
  await step("holders", () => c.zrange("semaphore:short", 0, -1));
  await step("t releases", () => t.release());

  note("-- refresh keeps a short permit");
  const r = new Semaphore(c, "refresh", 1, { lockTimeout: 600, refreshInterval: 100, acquireTimeout: 300, retryInterval: 20, identifier: "r" });
  await step("r acquires, 600 ms, refresh every 100 ms", () => r.acquire());
  await sleep(1200);
  await step("after 1200 ms: isAcquired", () => r.isAcquired);
  await step("holders", () => c.zrange("semaphore:refresh", 0, -1));
  await step("r releases", () => r.release());

  note("-- lock lost");
  let lost = "not called";
  const l = new Semaphore(c, "lost", 1, {
    lockTimeout: 1000, refreshInterval: 100, acquireTimeout: 300, retryInterval: 20, identifier: "l",
    onLockLost: (e) => { lost = describe(e); },
  });
  await step("l acquires", () => l.acquire());
  await step("another client removes it", () => c.zrem("semaphore:lost", "l"));
  await sleep(300);
  await step("onLockLost", () => lost);
  await step("isAcquired", () => l.isAcquired);
  await step("l releases", () => l.release());

  note("-- MultiSemaphore: two permits of three at once");
  const m = new MultiSemaphore(c, "multi", 3, 2, { ...quick, identifier: "m" });
  const n = new MultiSemaphore(c, "multi", 3, 2, { ...quick, identifier: "n" });
  await step("m acquires 2", () => m.acquire());
  await step("n tryAcquire 2", () => n.tryAcquire());
  await step("permits held", () => c.zcard("semaphore:multi"));
  await step("m releases", () => m.release());
  await step("n acquires 2", () => n.acquire());
  await step("n releases", () => n.release());
  await step("key gone", () => c.exists("semaphore:multi"));
  note("done");
  await c.quit();
}

main().catch((e) => {
  console.log(`driver failed: ${describe(e)}`);
  process.exit(1);
});

// node-redlock v5 (`redlock`) over ioredis, used as its users use it.
//
//     node redlock_driver.js LIVE LIVE LIVE DEAD DEAD
//
// The first three addresses are servers that answer; nothing listens on the
// last two (masters that are down). Prints a deterministic transcript; see
// tests/redis/lock_libraries.rs.
"use strict";
const { default: Redlock, ExecutionError, Lock } = require("redlock");
const { step, note, sleep, live, dead, describe, usage, version } = require("./transcript");

// The votes of an attempt, as counts and the distinct reasons against; a
// vote against from a master that is down reads "unreachable" (ioredis's
// message depends on the moment of the connection attempt).
async function votes(attempt) {
  const stats = await attempt;
  const against = [...stats.votesAgainst.values()].map((e) =>
    e.name === "ResourceLockedError" || e.name === "ReplyError" ? describe(e) : "unreachable"
  );
  return `for ${stats.votesFor.size}, against ${stats.votesAgainst.size} [${[...new Set(against)].sort().join("; ")}]`;
}

// Runs fn; a lock it returns prints as its votes, an ExecutionError as its
// message, its number of attempts and the last attempt's votes.
async function lockStep(name, fn) {
  return step(name, async () => {
    try {
      const v = await fn();
      if (v instanceof Lock) return `lock, ${await votes(v.attempts[v.attempts.length - 1])}`;
      if (v && v.attempts) return `done, ${await votes(v.attempts[v.attempts.length - 1])}`;
      return v;
    } catch (e) {
      if (!(e instanceof ExecutionError)) throw e;
      const last = e.attempts.length ? `, last: ${await votes(e.attempts[e.attempts.length - 1])}` : "";
      return `ExecutionError: ${e.message} (${e.attempts.length} attempts${last})`;
    }
  });
}

async function main() {
  if (process.argv.length !== 7) usage("usage: redlock_driver.js LIVE LIVE LIVE DEAD DEAD");
  const args = process.argv.slice(2);
  const up = await Promise.all(args.slice(0, 3).map(live));
  const down = args.slice(3).map(dead);
  note(`redlock ${version("redlock")} over ioredis ${version("ioredis")}`);
  const settings = { retryCount: 3, retryDelay: 50, retryJitter: 0 };
  const redlock = new Redlock(up, settings);
  redlock.on("error", () => {}); // every vote against is also emitted here
  const onAll = async (key) => Promise.all(up.map((c) => c.exists(key)));
  const pttls = async (key, lo, hi) => Promise.all(up.map(async (c) => { const t = await c.pttl(key); return t > lo && t <= hi; }));

  const lockA = await lockStep("a acquires res3", async () => (lockA1 = await redlock.acquire(["res3"], 10000)));
  await step("res3 on each master", () => onAll("res3"));
  await step("pttl near 10 s on each", () => pttls("res3", 8500, 10000));
  await lockStep("b acquires res3", () => redlock.acquire(["res3"], 10000));
  await lockStep("b acquires res3 and free1 together", () => redlock.acquire(["free1", "res3"], 10000));
  await step("free1 left on no master", () => onAll("free1"));
  await lockStep("a extends res3 to 20 s", async () => (lockA2 = await lockA1.extend(20000)));
  await step("pttl near 20 s on each", () => pttls("res3", 18500, 20000));
  await lockStep("the old lock object extends", () => lockA1.extend(20000));
  // another owner's lock on the same resource (release() invalidates the
  // object, so one each)
  const fake = () => new Lock(redlock, ["res3"], "not-the-owner", [], Date.now() + 10000);
  await lockStep("wrong owner releases", () => fake().release());
  await lockStep("wrong owner extends", () => fake().extend(5000));
  await step("res3 still on each master", () => onAll("res3"));
  await lockStep("a releases", () => lockA2.release());
  await step("res3 on each master", () => onAll("res3"));
  await lockStep("a releases again", () => lockA2.release());
  await lockStep("a extends after release", () => lockA2.extend(1000));

  note("-- several resources in one lock");
  await lockStep("acquire m1, m2, m3", async () => (mlock = await redlock.acquire(["m1", "m2", "m3"], 10000)));
  await lockStep("another acquires m3 alone", () => redlock.acquire(["m3"], 10000));
  await lockStep("release m1, m2, m3", () => mlock.release());
  await step("m2 on each master", () => onAll("m2"));

  note("-- expiry");
  const c = await redlock.acquire(["ttl"], 300);
  await step("c acquired ttl for 300 ms", () => pttls("ttl", 0, 300));
  await lockStep("d acquires at once (no retry)", () => redlock.acquire(["ttl"], 10000, { retryCount: 0 }));
  await sleep(600);
  await step("after 600 ms, ttl on each master", () => onAll("ttl"));
  await lockStep("d acquires", async () => (dlock = await redlock.acquire(["ttl"], 10000)));
  await lockStep("c extends (expired)", () => c.extend(1000));
  await lockStep("c releases (expired, taken by d)", () => c.release());
  await lockStep("d releases", () => dlock.release());

  note("-- using(): extended automatically while the routine runs");
  await step("routine's view after 1300 ms of a 1000 ms lock", () =>
    redlock.using(["job"], 1000, { automaticExtensionThreshold: 500 }, async (signal) => {
      await sleep(1300);
      return { aborted: signal.aborted, onMasters: await onAll("job") };
    })
  );
  await step("job on each master afterwards", () => onAll("job"));

  note("-- a resource that holds a hash on one master (WRONGTYPE inside the scripts)");
  await step("hset on the first master", () => up[0].hset("hashed", "field", "value"));
  await lockStep("acquire hashed", async () => (hashed = await redlock.acquire(["hashed"], 10000, { retryCount: 0 })));
  await lockStep("extend hashed", async () => (hashed = await redlock.extend(hashed, 10000, { retryCount: 0 })));
  await lockStep("release hashed", () => redlock.release(hashed, { retryCount: 0 }));
  await step("type on each master", () => Promise.all(up.map((c) => c.type("hashed"))));

  note("-- the script cache flushed on every master");
  await step("script flush", () => Promise.all(up.map((c) => c.script("FLUSH"))));
  await lockStep("acquire after the flush", async () => (flock = await redlock.acquire(["flushed"], 10000)));
  await lockStep("release", () => flock.release());

  note("-- one master of three down");
  const r1 = new Redlock([up[0], up[1], down[0]], settings);
  r1.on("error", () => {});
  await lockStep("acquire", async () => (e1 = await r1.acquire(["one-down"], 10000)));
  await step("live masters holding it", () => onAll("one-down"));
  await lockStep("extend", async () => (e1 = await e1.extend(10000)));
  await lockStep("release", () => e1.release());
  await step("live masters holding it", () => onAll("one-down"));

  note("-- two masters of three down");
  const r2 = new Redlock([up[0], down[0], down[1]], settings);
  r2.on("error", () => {});
  await lockStep("acquire", () => r2.acquire(["two-down"], 10000));
  await step("live masters holding it", () => onAll("two-down"));

  note("-- a majority held by another owner");
  await lockStep("h acquires on two live masters (third down)", async () => (hlock = await r1.acquire(["major"], 10000)));
  await lockStep("i on all three live masters", () => redlock.acquire(["major"], 10000, { retryCount: 1 }));
  await step("live masters holding it", () => onAll("major"));
  await lockStep("h releases", () => hlock.release());
  await lockStep("i acquires", async () => (ilock = await redlock.acquire(["major"], 10000)));
  await lockStep("i releases", () => ilock.release());
  note("done");
  await redlock.quit();
  for (const c of down) c.disconnect();
}

let hashed, flock, lockA1, lockA2, mlock, dlock, e1, hlock, ilock;
main().catch((e) => {
  console.log(`driver failed: ${describe(e)}`);
  process.exit(1);
});

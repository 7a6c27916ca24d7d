// Shared helper of the Node drivers: prints one deterministic line per step.
//
// A step's line is `name: value` or `name: raises ClassName: message`, so a
// transcript holds no tokens and no timings, and the one from `redlock-sim
// node` can be compared line for line with the one from `redis-server`.
"use strict";
const Redis = require("ioredis");

function show(value) {
  if (value === undefined) return "undefined";
  return JSON.stringify(value);
}

// An error as the transcript shows it: the class and the message, with the
// addresses (free ports, different each run) replaced by ADDR.
function describe(e) {
  const msg = String(e && e.message).replace(/(127\.0\.0\.1|localhost):\d+/g, "ADDR");
  return `${(e && e.constructor && e.constructor.name) || typeof e}: ${msg}`;
}

async function step(name, fn) {
  let value;
  try {
    value = await fn();
  } catch (e) {
    console.log(`${name}: raises ${describe(e)}`);
    return undefined;
  }
  console.log(`${name}: ${show(value)}`);
  return value;
}

function note(line) {
  console.log(line);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parse(addr) {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}

// A client of a server that answers, with ioredis's defaults.
async function live(addr) {
  const c = new Redis(parse(addr));
  await c.ping();
  return c;
}

// A client of an address where nothing listens (a master that is down):
// commands fail at once instead of waiting in ioredis's offline queue, and it
// does not reconnect.
function dead(addr) {
  const c = new Redis({
    ...parse(addr),
    lazyConnect: true,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  c.on("error", () => {});
  return c;
}

// A package's installed version (some packages' exports hide package.json).
function version(name) {
  const fs = require("fs");
  const path = require("path");
  const file = path.join(__dirname, "node_modules", name, "package.json");
  return JSON.parse(fs.readFileSync(file, "utf8")).version;
}

function usage(text) {
  console.error(text);
  process.exit(2);
}

module.exports = { step, note, sleep, live, dead, describe, usage, version };

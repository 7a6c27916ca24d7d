//! redlock-sim: a deterministic simulation and fault-injection harness for
//! Redis locks (the single-instance lock and Redlock).
//!
//! The modules, in the order data flows through them (scenario -> world ->
//! history -> verdict -> report):
//! - [`resp`]: RESP2 and RESP3 frames and their codec, shared by node and client;
//! - [`node`]: the Redis-like server (keyspace, expiry, one file per command
//!   family, Lua scripting, persistence, replication);
//! - [`client`]: the real lock client (Redlock, the single-instance lock,
//!   Redisson's reentrant lock, the watchdog, the known flaws), used on real
//!   Redis and in the simulation;
//! - [`clock`]: monotonic and wall clocks, system and simulated;
//! - [`duration`]: durations as users write them;
//! - [`scenario`]: the scenario file, parsed and validated into plain data;
//! - [`sim`]: the simulated world on turmoil (hosts, network faults, the
//!   nemesis, the sentinel, the protected store);
//! - [`own_lock`]: a scenario run with a lock of the user's own, written
//!   against the `redis` crate, in place of the built-in client;
//! - [`history`]: the events of one run, in time order;
//! - [`check`]: the checkers (mutual exclusion at the lock and at the
//!   resource, liveness figures) and the verdict;
//! - [`runner`]: one run as a library call (load, run, check, write);
//! - [`sweep`]: many seeds times many combinations, on threads, and merge;
//! - [`search`]: `shrink` (a minimal violating scenario) and `frontier`
//!   (where violations stop along one key);
//! - [`report`]: what `run`, `sweep` and `frontier` write (Markdown, HTML,
//!   CSV, SVG charts);
//! - [`flock`]: `redlock-sim lock`, a distributed `flock(1)` on real Redis.

pub mod check;
pub mod cli;
pub mod client;
pub mod clock;
pub mod duration;
pub mod flock;
pub mod history;
pub mod node;
pub mod own_lock;
pub mod report;
pub mod resp;
pub mod runner;
pub mod scenario;
pub mod search;
pub mod sha1;
pub mod sim;
pub mod stats;
pub mod sweep;
pub mod transport;

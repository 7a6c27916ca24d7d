//! redlock-sim: a deterministic simulation and fault-injection harness for
//! Redis locks (the single-instance lock, Redlock, Redisson's reentrant
//! lock, the legacy SETNX/GETSET lock).
//!
//! The modules, in the order data flows through them (scenario -> world ->
//! history -> verdict -> report); each imports only modules above it:
//! - [`resp`]: RESP2 and RESP3 frames and their codec, shared by node and client;
//! - [`sha1`]: the SHA1 of a script, computed by node and client alike;
//! - [`transport`]: how hosts open byte streams (tokio TCP, turmoil TCP);
//! - [`clock`]: monotonic and wall clocks, system and simulated;
//! - [`duration`]: durations as users write them;
//! - [`stats`]: intervals and percentiles shared by the checker, sweeps
//!   and reports;
//! - [`node`]: the Redis-like server (keyspace, expiry, one file per command
//!   family, Lua scripting, persistence, replication);
//! - [`client`]: the real lock client (Redlock, the single-instance lock,
//!   Redisson's reentrant lock, the watchdog, the known variants), used on
//!   real Redis and in the simulation;
//! - [`sentinel`]: the sentinel of the `single` topology (monitor,
//!   failover, the `SENTINEL` queries clients send), for the simulation and
//!   the lab;
//! - [`scenario`]: the scenario file, parsed and validated into plain data;
//! - [`history`]: the events of one run, in time order, faults typed;
//! - [`engine`]: the fault engine of both worlds (the plan drawn from the
//!   seed, the nemesis, the timers, what is down, paused, cut, slowed);
//! - [`sim`]: the simulated world on turmoil (hosts, links, the sentinel,
//!   the protected store);
//! - [`lab`]: the same scenarios in real time against real client
//!   processes, on the project's node and sentinel;
//! - [`check`]: the checkers (mutual exclusion at the lock and at the
//!   resource, liveness figures) and the verdict rules;
//! - [`runner`]: one run as a library call (load, run, check), writing nothing;
//! - [`sweep`]: many seeds times many combinations, on threads, tallied;
//! - [`search`]: `shrink` (a minimal violating scenario) and `frontier`
//!   (where violations stop along one key);
//! - [`report`]: the documents of a run, a sweep, a set and a frontier
//!   (Markdown, HTML, CSV, SVG charts), rendered and written;
//! - [`flock`]: `redlock-sim lock`, a distributed `flock(1)` on real Redis;
//! - [`cli`]: the command layer: parses the command line, calls the modules
//!   above, writes through `report`, prints, picks exit codes;
//! - [`own_lock`]: `run` with a lock of the user's own, written against the
//!   `redis` crate, in place of the built-in client.

pub mod check;
pub mod cli;
pub mod client;
pub mod clock;
pub mod duration;
pub mod engine;
pub mod flock;
pub mod history;
pub mod lab;
pub mod node;
pub mod own_lock;
pub mod report;
pub mod resp;
pub mod runner;
pub mod scenario;
pub mod search;
pub mod sentinel;
pub mod sha1;
pub mod sim;
pub mod stats;
pub mod sweep;
pub mod transport;

//! redlock-sim: a deterministic simulation and fault-injection harness for
//! Redis locks (the single-instance lock and Redlock).
//!
//! The pieces, in the order data flows through them:
//! - [`resp`]: RESP2 frames and codec, shared by node and client;
//! - [`node`]: the Redis-like server (keyspace, expiry, commands);
//! - [`client`]: the real Redlock client, used on real Redis and in simulation;
//! - [`clock`]: monotonic and wall clocks, system and simulated;
//! - [`duration`]: durations as users write them;
//! - [`own_lock`]: a scenario run with a lock of the user's own, written
//!   against the `redis` crate, in place of the built-in client.

pub mod check;
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
pub mod sim;
pub mod sweep;

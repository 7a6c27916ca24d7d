//! The Redlock client: real code, used against real Redis servers and in the
//! simulation alike. Time, randomness and connections reach it only through
//! [`redlock_proto::clock::Clock`], a seeded `ChaCha20Rng`, and [`Connector`].
//!
//! - `redlock_proto::connection`: connectors and the per-node connection
//!   with timeouts (the protocol crate's: the sentinel uses it too);
//! - [`scripts`]: the compare-and-delete and compare-and-pexpire scripts,
//!   and Redisson's reentrant lock scripts;
//! - [`redlock`]: the quorum lock (one node: the single-instance lock), with
//!   [`validity`]'s arithmetic;
//! - [`reentrant`]: Redisson's reentrant lock in the same client
//!   (`Config::lock`): re-entry and release by level;
//! - [`watchdog`]: extension every ttl/3 while a lock is held;
//! - [`redis_conn`]: a `redis` crate connection over that connection, for
//!   lock code of one's own written against the `redis` crate;
//! - [`flaw`]: deliberate flaws of known clients, for the simulation to show
//!   what each costs (off by default); `legacy` holds the SETNX-page lock.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod flaw;
pub mod flock;
mod legacy;
pub(crate) mod redis_conn;
pub(crate) mod redlock;
pub(crate) mod reentrant;
pub mod scripts;
pub(crate) mod validity;
pub(crate) mod watchdog;

pub use flaw::Variant;
pub use redis_conn::RedisConn;
pub use redlock::{Config, Lock, LockError, LockKind, NodeOutcome, Redlock};
pub use redlock_proto::connection::{Connector, SimConnector, TcpConnector};
pub use watchdog::{Status, Watchdog};

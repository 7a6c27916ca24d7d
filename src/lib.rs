//! redlock-sim: a deterministic simulation and fault-injection harness for
//! Redis locks (the single-instance lock, Redlock, Redisson's reentrant
//! lock, the legacy SETNX/GETSET lock), and a lab that runs the same
//! scenarios against real client processes.
//!
//! The workspace follows the layers, in the order data flows (scenario ->
//! world -> history -> verdict -> report); each crate imports only those
//! above it:
//! - `redlock-proto`: RESP, transports, connections, clocks, durations;
//! - `redlock-node`: the Redis-like node and its sentinel;
//! - `redlock-client`: the real lock client, used on real Redis and in the
//!   simulation, and `redlock-sim lock` (a distributed `flock(1)`);
//! - `redlock-harness`: scenarios, the fault engine, the simulated and lab
//!   worlds, histories, checkers, runs, sweeps and searches;
//! - `redlock-report`: the documents of a run, a sweep, a set, a frontier
//!   and the library matrix;
//! - this crate: [`cli`], the command layer (parses the command line,
//!   calls the crates above, writes through the reports, prints, picks
//!   exit codes), and [`own_lock`], `run` with a lock of the user's own,
//!   written against the `redis` crate, in place of the built-in client.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub mod cli;
pub mod own_lock;

/// The built-in lock client (the `redlock-client` crate): [`client::Redlock`]
/// on real Redis over TCP or on the simulated network, its
/// [`client::Config`], locks, errors and watchdog (`docs/own-lock.md`).
pub use redlock_client as client;

/// Clocks: the [`clock::Clock`] trait through which time reaches a client
/// (the machine's in the lab and on real Redis, a simulated host's in the
/// simulation).
pub use redlock_proto::clock;

/// The docs pages with Rust examples, compiled by `cargo test --doc`: an
/// example that stops compiling fails the suite.
#[cfg(doctest)]
#[doc = include_str!("../docs/own-lock.md")]
pub struct OwnLockPage;

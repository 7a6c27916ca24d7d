//! redlock-sim's harness: a scenario run in either world and judged. The
//! modules, in the order data flows through them (scenario -> world ->
//! history -> verdict); each imports only modules above it:
//! - [`stats`]: intervals and percentiles shared by the checker, sweeps
//!   and reports;
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
//! - [`runner`]: one run as a library call, in either world, writing nothing;
//! - [`sweep`]: many seeds times many combinations, on threads, tallied; a
//!   lab sweep; the library matrix;
//! - [`search`]: `shrink` (a minimal violating scenario) and `frontier`
//!   (where violations stop along one key).

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub mod check;
pub mod engine;
pub mod history;
pub mod lab;
pub mod runner;
pub mod scenario;
pub mod search;
pub mod sim;
pub mod stats;
pub mod sweep;

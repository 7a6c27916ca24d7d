//! redlock-sim's harness: a scenario run in either world and judged, many
//! runs swept and searched. It holds the runner, the sweeps and the
//! searches, and hands on the crates below it under the names the rest of
//! the workspace reads. The crates, in the order data flows through them
//! (scenario -> world -> history -> verdict); each depends only on crates
//! above it, so the compiler keeps the lab from importing the simulation:
//! - [`scenario`] (`redlock-scenario`): the scenario file, parsed and
//!   validated into plain data;
//! - [`history`] (`redlock-history`): the events of one run, in time order,
//!   faults typed;
//! - [`engine`] (`redlock-engine`): the fault engine of both worlds (the
//!   plan drawn from the seed, the nemesis, the timers, what is down,
//!   paused, cut, slowed);
//! - [`check`] (`redlock-check`): the checkers (mutual exclusion at the lock
//!   and at the resource, liveness figures) and the verdict rules; with
//!   [`stats`], the intervals and percentiles shared by the checker, sweeps
//!   and reports;
//! - [`sim`] (`redlock-simulation`): the simulated world on turmoil (hosts,
//!   links, the sentinel, the protected store);
//! - [`lab`] (`redlock-lab`): the same scenarios in real time against real
//!   client processes, on the project's node and sentinel or on
//!   `redis-server`;
//!
//! and this crate's own modules:
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

pub use redlock_check as check;
pub use redlock_check::stats;
pub use redlock_engine as engine;
pub use redlock_history as history;
pub use redlock_lab as lab;
pub use redlock_scenario as scenario;
pub use redlock_simulation as sim;

pub mod runner;
pub mod search;
pub mod sweep;

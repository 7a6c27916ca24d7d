//! The simulation's tests: one test crate, so the optimized library is linked
//! once for all of them. They need nothing outside this repository (no
//! `redis-server`, no lock library): `cargo test --release --test sim` is the
//! quick loop while working on the simulation.
//!
//! Each module is one subject; the shared support (servers, the node served
//! in-process, the scenario mutator) is `tests/support/`.

#[path = "../support/mod.rs"]
mod common;

mod aim;
mod broken_pipe;
mod campaign;
mod check;
mod compare;
mod docs;
mod frontier;
mod inconclusive;
mod kill;
mod limits;
mod network;
mod no_false_alarm;
mod own_lock;
mod report_wording;
mod run_dirs;
mod scenario_parse;
mod scenarios;
mod shrink;
mod single_topology;
mod skipping;
mod store_link;
mod sweep;
mod sweep_dirs;
mod sweep_set;
mod variants;
mod vendored;

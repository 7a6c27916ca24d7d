//! The lab's pieces on real loopback TCP and the wall clock. Real time is
//! noisy: every test asserts with margins (a lower bound the forwarder must
//! respect, an upper bound far above what an idle machine needs), never an
//! exact timing.

#[path = "../support/mod.rs"]
mod common;

mod bugs;
mod clock;
mod inconclusive;
mod leftovers;
mod matrix;
mod outside;
mod real_redis;
mod recipes;
mod refusals;
mod report;
mod runs;
mod sent;
mod sentinel;
mod templates;

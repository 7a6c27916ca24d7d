//! Searching for violations instead of waiting for them: [`shrink`] turns one
//! violating run into a minimal scenario of explicit faults; [`frontier`]
//! finds where violations stop along one numeric key.
//!
//! Both sit above the runner: each step is a deterministic replay of a
//! scenario by [`crate::runner`]. They return data (a scenario's text and
//! its run, a frontier); the command layer (`redlock_sim::cli`) writes them.

pub mod explicit;
pub mod frontier;
mod replay;
pub mod shrink;
mod steps;
mod toml_out;

//! Searching for violations instead of waiting for them: [`shrink`] turns one
//! violating run into a minimal scenario of explicit faults; [`frontier`]
//! finds where violations stop along one numeric key.
//!
//! Both sit above the runner: each step is a deterministic replay of a
//! scenario by [`crate::runner`], and what they write is a scenario file and
//! reports (`crate::report`).

pub mod explicit;
pub mod frontier;
mod replay;
pub mod shrink;
mod steps;
mod toml_out;

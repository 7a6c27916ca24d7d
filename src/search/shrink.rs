//! `redlock-sim shrink`: one violating run becomes a minimal scenario.
//!
//! (Being built: issue 12.)

use crate::runner::Failure;
use std::path::{Path, PathBuf};

/// What [`shrink_file`] produced.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// Faults of the violating run (the nemesis's and the file's).
    pub before: usize,
    /// Faults of the minimal scenario.
    pub after: usize,
    /// The text of `minimal.toml`.
    pub minimal_toml: String,
    /// Where `minimal.toml` was written (`DIR/minimal.toml`).
    pub path: PathBuf,
}

/// Shrinks the run of `file` (with `sets` applied) at `seed` (default: the
/// scenario's) into `out` (default: `reports/<name>/shrink-seed-<N>/`):
/// `Ok(None)` when that run does not violate (nothing written).
pub fn shrink_file(
    file: &Path,
    seed: Option<u64>,
    sets: &[(String, toml::Value)],
    out: Option<PathBuf>,
    jobs: usize,
) -> Result<Option<Shrunk>, Failure> {
    let _ = (file, seed, sets, out, jobs);
    Err(Failure::Failed("shrink is not built yet".into()))
}

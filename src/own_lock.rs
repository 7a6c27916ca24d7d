//! Run a scenario file with a lock of your own in place of the built-in
//! client: `redlock-sim run`, as a library call.
//!
//! Write the lock against the `redis` crate's async connection
//! ([`redis::aio::ConnectionLike`]), implement [`OwnLock`] for it, and hand
//! [`run_file`] a function that builds it for each client host from a
//! [`LockEnv`] (connections over the simulated network, the simulated
//! clock, a seeded generator). [`run_file`] parses the scenario as `run`
//! does, runs it, prints the same summary lines, writes the same report and
//! returns `run`'s exit code; [`simulate`] runs one seed and returns the run
//! (verdict, figures, trace) without writing anything. See
//! `examples/redis_crate_lock/`.

pub use redlock_client::RedisConn;
pub use redlock_harness::sim::own::{factory, Failure, Lease, LockEnv, OwnLock};

use redlock_harness::runner::{self, Run, RunError};
use redlock_harness::scenario::{Scenario, ScenarioError};
use redlock_harness::sim::own;
use redlock_harness::sim::workload::LockCode;
use std::path::{Path, PathBuf};

/// `redlock-sim run FILE [--seed N] [--out DIR]` with the clients running
/// the lock `build` makes: prints what `run` prints and returns its exit
/// code (0: the verdict matches the scenario's `expect`; 1: it does not;
/// 2: bad input, with one message on stderr and nothing written; 70: the
/// run failed).
pub fn run_file<L: OwnLock>(
    file: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    build: impl Fn(LockEnv) -> L + Send + Sync + 'static,
) -> u8 {
    let code = LockCode::Own(factory(build));
    let result = load(file).and_then(|s| crate::cli::run::run_scenario(s, seed, out, &code));
    crate::cli::run::finish_run(result, &program())
}

/// The running program's name, for error messages.
fn program() -> String {
    std::env::args()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "run".to_string())
}

/// Runs `scenario` with `seed`, the clients running the lock `build` makes;
/// keeps the history (`Run::history`) when `keep`. Writes nothing.
pub fn simulate<L: OwnLock>(
    scenario: Scenario,
    seed: u64,
    keep: bool,
    build: impl Fn(LockEnv) -> L + Send + Sync + 'static,
) -> Result<Run, RunError> {
    check(&scenario, None, "").map_err(RunError::BadInput)?;
    runner::simulate_code(scenario, seed, keep, &LockCode::Own(factory(build)))
}

/// Loads `file` as `run` does, and refuses what a lock of one's own cannot
/// run (see [`own::unsupported`]).
pub(crate) fn load(file: &Path) -> Result<Scenario, RunError> {
    let scenario = runner::load_file(file, &[])?;
    let text = std::fs::read_to_string(file).unwrap_or_default();
    check(&scenario, Some(&text), &file.display().to_string()).map_err(RunError::BadInput)?;
    Ok(scenario)
}

fn check(s: &Scenario, text: Option<&str>, file: &str) -> Result<(), ScenarioError> {
    match own::unsupported(s) {
        None => Ok(()),
        Some((key, message)) => {
            let found = text.and_then(|t| find_true(t, "renew"));
            Err(ScenarioError {
                file: file.to_string(),
                key: found.as_ref().map_or(key, |(k, _)| k.clone()),
                line: found.map(|(_, l)| l),
                message,
            })
        }
    }
}

/// The dotted path and 1-based line of the first `key = true` in `text`.
fn find_true(text: &str, key: &str) -> Option<(String, usize)> {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap_or("").trim();
        if let Some(h) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            table = h.trim_matches(['[', ']']).trim().to_string();
        } else if let Some((k, v)) = l.split_once('=') {
            if k.trim().trim_matches('"') == key && v.trim() == "true" {
                let path = if table.is_empty() {
                    key.to_string()
                } else {
                    format!("{table}.{key}")
                };
                return Some((path, i + 1));
            }
        }
    }
    None
}

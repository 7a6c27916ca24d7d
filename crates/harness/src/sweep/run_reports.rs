//! The run reports of a sweep, under `DIR/runs/`: for the first
//! [`super::REPLAY_SEEDS`] violating seeds of each combination, the files
//! `run` writes (`history.csv`, `summary.json`, `report.md`, `index.html`,
//! `timeline.svg`), in the directory `run --seed N --set ...` would name
//! (`runs/seed-3--cluster.restart=0.95ttl/`), so that the sweep's report
//! links each violating run it lists to its timeline.
//!
//! Each run is replayed from the scenario text with its combination's
//! overrides and must give the trace `runs.csv` recorded, all of them
//! before anything of the sweep's outputs is written: a different trace
//! means rows of another version (bad input for `merge`) or a determinism
//! bug. The command layer writes them again each time it writes the
//! sweep's report (a resumed sweep too), so that they always show the
//! scenario text the report does.

use super::{pool, Plan};
use crate::runner::{self, Run};
use crate::scenario;
use crate::sim::workload::LockCode;
use std::path::PathBuf;

/// The subdirectory of the sweep's directory that holds the run reports.
pub(crate) const RUNS_DIR: &str = "runs";

/// A violating run to write: its combination, seed and recorded trace.
pub(crate) struct Wanted {
    pub(crate) cell: usize,
    pub seed: u64,
    pub trace: String,
}

/// The path of the run's `index.html`, relative to the sweep's directory.
pub(crate) fn link(plan: &Plan, cell: usize, seed: u64) -> String {
    let sets = &plan.cells[cell].0;
    format!(
        "{RUNS_DIR}/{}/index.html",
        runner::dir_name("seed-", seed, sets)
    )
}

/// Why the run reports could not be made.
pub(crate) enum ReplayError {
    /// A run replayed to another trace than `runs.csv` holds: the rows were
    /// made by another version of the program, or edited, or the simulation
    /// is not deterministic (a bug).
    Mismatch(String),
    /// A run failed, or an output could not be written.
    Failed(String),
}

/// A replayed run, checked, not yet written.
pub struct Replayed {
    /// Its directory, relative to the sweep's (`runs/seed-3--...`).
    pub dir: PathBuf,
    /// Its combination's index in the plan.
    pub cell: usize,
    /// The run, history kept.
    pub run: Run,
}

/// Replays `wanted` on `jobs` threads and checks each trace against the one
/// `runs.csv` holds; nothing is written. The result is in `wanted`'s order
/// whatever the threads did.
pub(crate) fn replay(
    plan: &Plan,
    wanted: &[Wanted],
    jobs: usize,
) -> Result<Vec<Replayed>, ReplayError> {
    // Past the first failure no other replay starts.
    let results = pool::map_in_order(
        wanted.len(),
        jobs,
        |k| replay_one(plan, &wanted[k]),
        Result::is_err,
    );
    // The first failure in `wanted`'s order, so the message is the same
    // whatever the threads did (slots past it were never started).
    let replayed: Vec<Replayed> = results.into_iter().flatten().collect::<Result<_, _>>()?;
    // Without a failure nothing stopped: every run was replayed, in order.
    assert!(
        replayed.len() == wanted.len()
            && replayed.iter().zip(wanted).all(|(r, w)| r.cell == w.cell),
        "{} run reports replayed for {} wanted",
        replayed.len(),
        wanted.len()
    );
    Ok(replayed)
}

fn replay_one(plan: &Plan, w: &Wanted) -> Result<Replayed, ReplayError> {
    let sets = &plan.cells[w.cell].0;
    let dir = PathBuf::from(RUNS_DIR).join(runner::dir_name("seed-", w.seed, sets));
    let s = scenario::parse_with_overrides(&plan.text, &plan.file, sets)
        .map_err(|e| ReplayError::Failed(e.to_string()))?;
    let run = runner::simulate_code(s, w.seed, true, &LockCode::BuiltIn).map_err(|e| {
        ReplayError::Failed(format!(
            "the run report of seed {} ({}): {e}",
            w.seed,
            dir.display()
        ))
    })?;
    if run.trace != w.trace {
        return Err(ReplayError::Mismatch(format!(
            "seed {} with {} replays to trace {} where runs.csv has {}: runs.csv was made by \
             another version of redlock-sim or edited (or the simulation is not deterministic, a bug)",
            w.seed,
            plan.cells[w.cell].1.join(", "),
            run.trace,
            w.trace
        )));
    }
    Ok(Replayed {
        dir,
        cell: w.cell,
        run,
    })
}

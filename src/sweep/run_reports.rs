//! The run reports a sweep writes under `DIR/runs/`: for the first
//! [`super::REPLAY_SEEDS`] violating seeds of each combination, the files
//! `run` writes (`history.csv`, `summary.json`, `report.md`, `index.html`,
//! `timeline.svg`), in the directory `run --seed N --set ...` would name
//! (`runs/seed-3--cluster.restart=0.95ttl/`), so that the sweep's report
//! links each violating run it lists to its timeline.
//!
//! Each run is replayed from the scenario text with its combination's
//! overrides and must give the trace `runs.csv` recorded; a different trace
//! is a determinism bug and fails the sweep. They are written again each
//! time the sweep's report is (a resumed sweep too), so that they always
//! show the scenario text the report does.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::Plan;
use crate::runner;
use crate::scenario;
use crate::sim::workload::LockCode;

/// The subdirectory of the sweep's directory that holds the run reports.
pub const RUNS_DIR: &str = "runs";

/// A violating run to write: its combination, seed and recorded trace.
pub struct Wanted {
    pub cell: usize,
    pub seed: u64,
    pub trace: String,
}

/// The path of the run's `index.html`, relative to the sweep's directory.
pub fn link(plan: &Plan, cell: usize, seed: u64) -> String {
    let sets = &plan.cells[cell].0;
    format!(
        "{RUNS_DIR}/{}/index.html",
        runner::dir_name("seed-", seed, sets)
    )
}

/// Writes the reports of `wanted` into `out/runs/`, on `jobs` threads.
pub fn write(plan: &Plan, wanted: &[Wanted], out: &Path, jobs: usize) -> io::Result<()> {
    if wanted.is_empty() {
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, wanted.len()) {
            let builder = std::thread::Builder::new().stack_size(16 << 20);
            let spawned = builder.spawn_scoped(s, || loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(w) = wanted.get(k) else { return };
                if let Err(e) = write_one(plan, w, out) {
                    let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
                    f.get_or_insert(e);
                    next.store(usize::MAX / 2, Ordering::SeqCst);
                    return;
                }
            });
            if let Err(e) = spawned {
                let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
                f.get_or_insert(format!("cannot start a thread: {e}"));
            }
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(io::Error::other(e)),
        None => Ok(()),
    }
}

fn write_one(plan: &Plan, w: &Wanted, out: &Path) -> Result<(), String> {
    let sets = &plan.cells[w.cell].0;
    let dir = out
        .join(RUNS_DIR)
        .join(runner::dir_name("seed-", w.seed, sets));
    let s =
        scenario::parse_with_overrides(&plan.text, &plan.file, sets).map_err(|e| e.to_string())?;
    let (run, _) =
        runner::run_scenario_with(s, Some(w.seed), Some(dir.clone()), &LockCode::BuiltIn, sets)
            .map_err(|e| format!("the run report of seed {} ({}): {e}", w.seed, dir.display()))?;
    if run.trace != w.trace {
        return Err(format!(
            "seed {} replayed to trace {} where runs.csv has {}: the simulation is not deterministic (a bug; please report it)",
            w.seed, run.trace, w.trace
        ));
    }
    Ok(())
}

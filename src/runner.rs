//! `redlock-sim run` and `redlock-sim check` as library calls: load and
//! validate a scenario, run one seed, check the history, write the outputs.
//! The command line only parses flags, calls these and prints.

use crate::check::{self, CheckResult};
use crate::history::History;
use crate::report::{self, RunOutput};
use crate::scenario::{self, Expect, Scenario, ScenarioError};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why `run` could not produce a verdict.
#[derive(Debug)]
pub enum Failure {
    /// The scenario file is unreadable or invalid (exit code 2).
    BadInput(ScenarioError),
    /// The simulation or writing the outputs failed.
    Failed(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::BadInput(e) => write!(f, "{e}"),
            Failure::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// One finished run.
pub struct Run {
    pub scenario: Scenario,
    pub seed: u64,
    pub history: History,
    pub check: CheckResult,
    pub trace: String,
    pub wall_ms: f64,
}

impl Run {
    /// Did the verdict match the scenario's `expect`?
    pub fn as_expected(&self) -> bool {
        match self.scenario.expect {
            Expect::Safe => self.check.verdict == check::Verdict::Safe,
            Expect::Violation => self.check.verdict == check::Verdict::Violation,
            // "degraded" is judged by the liveness rule of the variants work;
            // until then a safe run is what it asks for.
            Expect::Degraded => self.check.verdict == check::Verdict::Safe,
        }
    }

    pub fn output(&self) -> RunOutput<'_> {
        RunOutput {
            scenario: &self.scenario,
            seed: self.seed,
            history: &self.history,
            check: &self.check,
            trace: self.trace.clone(),
            wall_ms: self.wall_ms,
        }
    }
}

/// Runs `scenario` with `seed` (in this thread) and checks the history.
pub fn simulate(scenario: Scenario, seed: u64) -> Result<Run, Failure> {
    let start = Instant::now();
    let history = crate::sim::run(&scenario, seed).map_err(|e| Failure::Failed(e.to_string()))?;
    let check = check::check(&history);
    let trace = history.trace();
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(Run {
        scenario,
        seed,
        history,
        check,
        trace,
        wall_ms,
    })
}

/// Where `run` writes by default: `reports/<name>/seed-<N>/`.
pub fn default_out(scenario: &Scenario, seed: u64) -> PathBuf {
    Path::new("reports")
        .join(&scenario.name)
        .join(format!("seed-{seed}"))
}

/// `redlock-sim run FILE [--seed N] [--out DIR]`: validates first (nothing is
/// written for a bad file), runs, writes the outputs, returns the run and
/// the directory written.
pub fn run_file(
    file: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
) -> Result<(Run, PathBuf), Failure> {
    let scenario = scenario::load(file).map_err(Failure::BadInput)?;
    let seed = seed.unwrap_or(scenario.seed);
    let dir = out.unwrap_or_else(|| default_out(&scenario, seed));
    let run = simulate(scenario, seed)?;
    report::write_run(&dir, &run.output())
        .map_err(|e| Failure::Failed(format!("{}: {e}", dir.display())))?;
    Ok((run, dir))
}

/// `redlock-sim check FILE...`: validates each file (every sweep cell too).
pub fn check_file(file: &Path) -> Result<(), ScenarioError> {
    match std::fs::read_to_string(file) {
        Ok(text) => scenario::check_sweep(&text, &file.display().to_string()).map(|_| ()),
        Err(_) => scenario::load(file).map(|_| ()),
    }
}

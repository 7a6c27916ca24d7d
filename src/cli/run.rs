//! `redlock-sim run`: load a scenario, run one seed ([`redlock_harness::runner`]),
//! write the run's report ([`redlock_report::write_run`]), print its summary
//! and pick the exit code.

use super::exit;
use redlock_harness::runner::{default_out, load_file, simulate_stepping, Run, RunError};
use redlock_harness::scenario::Scenario;
use redlock_harness::sim::workload::LockCode;
use redlock_harness::sim::Stepping;
use redlock_report::RunOutput;
use std::path::{Path, PathBuf};

/// `run FILE [--seed N] [--out DIR] [--set KEY=VALUE]... [--every-tick]`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (default: reports/<name>/seed-<N>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Override a key, as a sweep combination does: `--set
    /// cluster.restart=0.5ttl --set clients.variant=sequential` (repeatable;
    /// this is how a sweep's violating run is replayed).
    #[arg(long = "set", value_parser = redlock_harness::runner::parse_set)]
    set: Vec<(String, toml::Value)>,
    /// Step the simulation every tick instead of skipping the steps in
    /// which nothing can happen: the same run, slower (to check that).
    #[arg(long)]
    every_tick: bool,
}

/// `redlock-sim run`: the run, its outputs, its summary, its exit code.
pub(crate) fn command(args: Args) -> std::process::ExitCode {
    let stepping = super::stepping(args.every_tick);
    let result = run_file(&args.file, args.seed, args.out, &args.set, stepping);
    std::process::ExitCode::from(finish_run(result, "redlock-sim run"))
}

/// `redlock-sim run FILE [--seed N] [--out DIR] [--every-tick]`: validates first (nothing is
/// written for a bad file), runs, writes the outputs, returns the run and
/// the directory written.
pub(crate) fn run_file(
    file: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    overrides: &[(String, toml::Value)],
    stepping: Stepping,
) -> Result<(Run, PathBuf), RunError> {
    let scenario = load_file(file, overrides)?;
    run_scenario_with(scenario, seed, out, &LockCode::BuiltIn, overrides, stepping)
}

/// The rest of [`run_file`] once the scenario is loaded: runs `seed`
/// (default: the scenario's) with `code`, writes the outputs to `out`
/// (default: [`default_out`]).
pub(crate) fn run_scenario(
    scenario: Scenario,
    seed: Option<u64>,
    out: Option<PathBuf>,
    code: &LockCode,
) -> Result<(Run, PathBuf), RunError> {
    run_scenario_with(scenario, seed, out, code, &[], Stepping::default())
}

/// [`run_scenario`] for a scenario loaded with the `--set` overrides
/// `sets`: they name the default directory ([`redlock_harness::runner::dir_name`]) and the report
/// says it ran with them.
pub(crate) fn run_scenario_with(
    scenario: Scenario,
    seed: Option<u64>,
    out: Option<PathBuf>,
    code: &LockCode,
    sets: &[(String, toml::Value)],
    stepping: Stepping,
) -> Result<(Run, PathBuf), RunError> {
    let seed = seed.unwrap_or(scenario.seed);
    let dir = out.unwrap_or_else(|| default_out(&scenario, seed, sets));
    let run = simulate_stepping(scenario, seed, true, code, stepping)?;
    let output = RunOutput {
        sets,
        ..RunOutput::of(&run)
    };
    redlock_report::write_run(&dir, &output).map_err(|e| {
        RunError::Failed(format!(
            "cannot write the outputs to {}: {e}",
            dir.display()
        ))
    })?;
    Ok((run, dir))
}

/// What `redlock-sim run` prints for the outcome of [`run_file`] (the
/// summary lines and the report's path on stdout; an error on stderr,
/// `who` naming the command) and its exit code: 0 when the verdict matches
/// `expect`, 1 when not, [`exit::BAD_INPUT`], [`exit::SOFTWARE`].
pub(crate) fn finish_run(result: Result<(Run, PathBuf), RunError>, who: &str) -> u8 {
    match result {
        Ok((run, dir)) => {
            print!("{}", redlock_report::summary_lines(&RunOutput::of(&run)));
            println!("report: {}", dir.join("index.html").display());
            if run.as_expected() {
                0
            } else {
                1
            }
        }
        Err(RunError::BadInput(e)) => {
            eprintln!("{e}");
            exit::BAD_INPUT
        }
        Err(e) => {
            eprintln!("{who}: {e}");
            exit::SOFTWARE
        }
    }
}

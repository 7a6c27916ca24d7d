//! `redlock-sim shrink`: shrink one violating run ([`redlock_harness::search::shrink`])
//! and write `minimal.toml` with the report of its run beside it.

use super::exit;
use redlock_harness::runner::{self, RunError};
use redlock_harness::search::shrink::{shrink_file, Shrunk};
use redlock_report::RunOutput;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Shrinks and writes: `minimal.toml` and its run's report into the
/// directory the search chose; `Ok(None)` when the run does not violate
/// (nothing written).
pub(crate) fn shrink_and_write(
    file: &Path,
    seed: Option<u64>,
    sets: &[(String, toml::Value)],
    out: Option<PathBuf>,
    jobs: usize,
) -> Result<Option<Shrunk>, RunError> {
    let Some(done) = shrink_file(file, seed, sets, out, jobs)? else {
        return Ok(None);
    };
    let cannot = |e: std::io::Error| {
        RunError::Failed(format!(
            "cannot write the outputs to {}: {e}",
            done.dir.display()
        ))
    };
    std::fs::create_dir_all(&done.dir).map_err(cannot)?;
    std::fs::write(&done.path, &done.minimal_toml).map_err(cannot)?;
    redlock_report::write_run(&done.dir, &RunOutput::of(&done.last)).map_err(cannot)?;
    Ok(Some(done))
}

/// `shrink FILE [--seed N] [--set KEY=VALUE]... [--out DIR] [--jobs J]`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Override a key, as `run --set` does (repeatable).
    #[arg(long = "set", value_parser = runner::parse_set)]
    set: Vec<(String, toml::Value)>,
    /// Output directory (default: reports/<name>/shrink-seed-<N>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Threads replaying candidates (default: all cores); the result
    /// is the same for any number.
    #[arg(long)]
    jobs: Option<usize>,
}

/// `redlock-sim shrink`: prints `faults:`, `minimal:`, `replays:` and
/// `report:`; exit 0, 1 when the run does not violate, 2, or 70.
pub(crate) fn command(args: Args) -> ExitCode {
    let Args {
        file,
        seed,
        set,
        out,
        jobs,
    } = args;
    let jobs = super::jobs_or_cores(jobs);
    match shrink_and_write(&file, seed, &set, out, jobs) {
        Ok(Some(done)) => {
            println!("faults: {} -> {}", done.before, done.after);
            println!("minimal: {}", done.path.display());
            println!("replays: {}", done.replays);
            if let Some(dir) = done.path.parent() {
                println!("report: {}", dir.join("index.html").display());
            }
            ExitCode::SUCCESS
        }
        Ok(None) => {
            let seed = seed
                .or_else(|| runner::load_file(&file, &set).ok().map(|s| s.seed))
                .map_or_else(String::new, |s| format!(" with seed {s}"));
            println!(
                "{}: the run{seed} has no violation: nothing to shrink, nothing written",
                file.display()
            );
            ExitCode::from(1)
        }
        Err(RunError::BadInput(e)) => {
            eprintln!("{e}");
            ExitCode::from(exit::BAD_INPUT)
        }
        Err(e) => {
            eprintln!("redlock-sim shrink: {e}");
            ExitCode::from(exit::SOFTWARE)
        }
    }
}

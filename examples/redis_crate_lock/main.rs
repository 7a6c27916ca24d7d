//! A lock written with the `redis` crate alone (`lock.rs`), run in
//! redlock-sim's simulation on a scenario file:
//!
//!     cargo run --release --example redis_crate_lock -- FILE [--seed N] [--out DIR]
//!
//! prints the summary lines of `redlock-sim run`, writes the same report,
//! and exits as `run` does (0 when the verdict matches the scenario's
//! `expect`, 1 when not, 2 for bad input).

mod harness;
mod lock;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a scenario with the redis-crate lock in place of the built-in client.
#[derive(Parser)]
#[command(name = "redis_crate_lock")]
struct Args {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (default: reports/<name>/seed-<N>/).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    ExitCode::from(redlock_sim::own_lock::run_file(
        &args.file,
        args.seed,
        args.out,
        harness::build,
    ))
}

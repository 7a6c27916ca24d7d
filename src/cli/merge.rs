//! `redlock-sim merge DIR... --out DIR [--jobs J]`: the shards of a sweep
//! ([`super::sweep::merge`]) or of a library matrix ([`super::matrix::merge`])
//! joined into what one run of it would have written.

use super::exit;
use std::path::PathBuf;
use std::process::ExitCode;

/// `merge DIR... --out DIR [--jobs J]`.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    #[arg(long, required = true)]
    out: PathBuf,
    /// Threads writing the run reports under DIR/runs/ (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// A matrix's shards when one of the directories is marked as one, else a
/// sweep's.
pub(crate) fn command(args: Args) -> ExitCode {
    let Args { dirs, out, jobs } = args;
    let mark = redlock_harness::sweep::matrix::SHARD_MARK;
    if dirs.iter().any(|d| d.join(mark).exists()) {
        return ExitCode::from(super::matrix::merge(&dirs, &out));
    }
    match super::sweep::merge(&dirs, &out, super::jobs_or_cores(jobs)) {
        Ok(done) => super::sweep::finished_sweep(&done, &out, None),
        Err(super::sweep::MergeError::BadInput(e)) => {
            eprintln!("redlock-sim merge: {e}");
            ExitCode::from(exit::BAD_INPUT)
        }
        Err(super::sweep::MergeError::Failed(e)) => {
            eprintln!("redlock-sim merge: {e}");
            ExitCode::from(exit::SOFTWARE)
        }
    }
}

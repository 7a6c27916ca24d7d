//! `redlock-sim frontier`: search along one key ([`redlock_harness::search::frontier`]),
//! shrink the boundary's violation, write the report, print the answer.

use super::exit;
use super::shrink::shrink_and_write;
use redlock_harness::runner::RunError;
use redlock_harness::search::frontier::{
    check, default_out, fault_lines, search, Frontier, Minimal, Outcome, Request, Trial, Value,
};
use redlock_report::frontier::{write_frontier, FrontierOutput};
use std::path::{Path, PathBuf};

/// A search written out: the search, its minimal scenario and the
/// directory of its report.
pub(crate) struct Done {
    pub frontier: Frontier,
    pub minimal: Minimal,
    pub dir: PathBuf,
}

/// `redlock-sim frontier`: checks the request (nothing is written for bad
/// input), searches, shrinks the boundary's violation into
/// `DIR/shrink-seed-<S>/` with [`shrink_and_write`] (when
/// that fails the report says why) and writes the report into `out`
/// (default: [`default_out`]).
pub(crate) fn frontier_file(
    req: &Request,
    out: Option<PathBuf>,
    progress: &mut dyn FnMut(&Trial),
) -> Result<Done, RunError> {
    let c = check(req)?;
    let frontier = search(req, &c, progress)?;
    let dir = out.unwrap_or_else(|| default_out(&c.scenario, &req.key));
    let minimal = match &frontier.outcome {
        Outcome::Found { violating, .. } => match violating.seed {
            Some(seed) => shrink_boundary(req, violating.value, seed, &dir),
            None => Minimal::NotMade("the violating value has no violating seed".into()),
        },
        _ => Minimal::NoBoundary,
    };
    let output = FrontierOutput {
        frontier: &frontier,
        minimal: &minimal,
    };
    write_frontier(&dir, &output).map_err(|e| {
        RunError::Failed(format!(
            "cannot write the outputs to {}: {e}",
            dir.display()
        ))
    })?;
    Ok(Done {
        frontier,
        minimal,
        dir,
    })
}

/// What `redlock-sim frontier` prints for the outcome of [`frontier_file`]
/// (`key:`, `violating:`, `safe:`, then `result:` when there is no
/// boundary, `minimal:` and `report:`; an error on stderr) and its exit
/// code: 0 with a boundary, 1 without, 2 for bad input, 70 on failure.
pub(crate) fn finish(result: Result<Done, RunError>) -> u8 {
    let done = match result {
        Ok(d) => d,
        Err(RunError::BadInput(e)) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
        Err(e) => {
            eprintln!("redlock-sim frontier: {e}");
            return exit::SOFTWARE;
        }
    };
    let f = &done.frontier;
    println!("key: {}", f.request.key);
    let code = match &f.outcome {
        Outcome::Found {
            violating, safe, ..
        } => {
            println!(
                "violating: {} seed {}",
                violating.value.show(),
                violating.seed.unwrap_or(0)
            );
            println!("safe: {} runs {}", safe.value.show(), safe.runs);
            0
        }
        Outcome::AllViolate => {
            // The largest value with a violation is the whole interval's top.
            let top = f
                .trials
                .iter()
                .max_by(|a, b| a.value.x.total_cmp(&b.value.x));
            match top {
                Some(t) => println!("violating: {} seed {}", t.value.show(), t.seed.unwrap_or(0)),
                None => println!("violating: none"),
            }
            println!("safe: none");
            println!("result: every value tried violated");
            1
        }
        Outcome::NoneViolate => {
            println!("violating: none");
            match f.trials.first() {
                Some(t) => println!("safe: {} runs {}", t.value.show(), t.runs),
                None => println!("safe: none"),
            }
            println!("result: no value tried violated");
            1
        }
    };
    match &done.minimal {
        Minimal::Made { path, .. } => println!("minimal: {}", path.display()),
        Minimal::NotMade(why) => println!("minimal: none ({why})"),
        Minimal::NoBoundary => {}
    }
    println!("report: {}", done.dir.join("report.md").display());
    code
}

/// Shrinks the run of `value` at `seed` into `dir/shrink-seed-<seed>/`.
fn shrink_boundary(req: &Request, value: Value, seed: u64, dir: &Path) -> Minimal {
    let sets = [(req.key.clone(), value.to_toml())];
    let out = dir.join(format!("shrink-seed-{seed}"));
    match shrink_and_write(&req.file, Some(seed), &sets, Some(out), req.jobs) {
        Ok(Some(s)) => Minimal::Made {
            faults: fault_lines(&s.minimal_toml),
            path: s.path,
            before: s.before,
            after: s.after,
        },
        Ok(None) => Minimal::NotMade(format!(
            "the run at seed {seed} did not violate when replayed by shrink"
        )),
        Err(e) => Minimal::NotMade(e.to_string()),
    }
}

/// `frontier FILE --key K --from V --to V [--seeds N] [--jobs J] [--out DIR]
/// [--resolution V]`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The scenario file (TOML).
    file: PathBuf,
    /// The dotted key, as `--set` takes it (cluster.restart).
    #[arg(long)]
    key: String,
    /// One end of the interval (a duration, a TTL multiple or a number).
    #[arg(long, allow_hyphen_values = true)]
    from: String,
    /// The other end, above --from.
    #[arg(long, allow_hyphen_values = true)]
    to: String,
    /// Seeds 1..=N at every value.
    #[arg(long, default_value_t = redlock_harness::search::frontier::DEFAULT_SEEDS)]
    seeds: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Output directory (default: reports/<name>/frontier-<key>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Stop when the bracket is at most this wide (default: (to - from) / 64).
    #[arg(long, allow_hyphen_values = true)]
    resolution: Option<String>,
}

/// `redlock-sim frontier`: searches with progress lines on stderr, writes,
/// prints the answer ([`finish`]).
pub(crate) fn command(args: Args) -> std::process::ExitCode {
    let out = args.out;
    let req = Request {
        file: args.file,
        key: args.key,
        from: args.from,
        to: args.to,
        seeds: args.seeds,
        jobs: super::jobs_or_cores(args.jobs).clamp(1, redlock_harness::sweep::MAX_JOBS),
        resolution: args.resolution,
    };
    let mut progress = |t: &Trial| {
        eprintln!(
            "frontier: {} = {}: {} of {} runs violated",
            req.key,
            t.value.show(),
            t.violating,
            t.runs
        );
    };
    let result = frontier_file(&req, out, &mut progress);
    std::process::ExitCode::from(finish(result))
}

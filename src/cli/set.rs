//! `redlock-sim sweep`: its arguments, and the sweep of several files
//! (`sweep FILE... --out DIR`, or one file with `--expect`): each file swept
//! into `DIR/<name>/` as `sweep FILE` would ([`super::sweep`]), then the
//! set's `summary.csv` and report ([`redlock_report::set`]) in `DIR`.

use super::exit;
use super::sweep::{run_sweep, Finished, Options};
use redlock_harness::scenario::Expect;
use redlock_harness::sweep::{meta, Plan};
use redlock_report::set::{answer, write_set, SetEntry, SetOutput};
use redlock_report::shell_word;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// `sweep FILE... [--seeds A..=B] [--jobs J] [--shard K/N] [--out DIR]
/// [--strict] [--fresh] [--expect E] [--every-tick]`.
#[derive(clap::Args)]
pub(crate) struct SweepArgs {
    /// The scenario file(s) (TOML).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Seeds to run, A..=B (or N for 1..=N); default: [sweep] seeds.
    #[arg(long, value_parser = redlock_harness::sweep::parse_seeds)]
    seeds: Option<RangeInclusive<u64>>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only the K-th of N equal slices of the runs (for many machines;
    /// join the shards with `merge`).
    #[arg(long, value_parser = redlock_harness::sweep::parse_shard)]
    shard: Option<(usize, usize)>,
    /// Output directory (default: reports/<name>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Exit 1 if a combination had a violation although the scenario
    /// expects safe.
    #[arg(long)]
    strict: bool,
    /// Discard what --out holds of this scenario's sweep and run every
    /// run again (without it a sweep resumes).
    #[arg(long)]
    fresh: bool,
    /// Sweep only the files whose `expect` is this (safe, violation or
    /// degraded); the others are named and left out.
    #[arg(long, value_parser = ["safe", "violation", "degraded"])]
    expect: Option<String>,
    /// Step every run every tick (see `run --every-tick`).
    #[arg(long)]
    every_tick: bool,
}

/// `redlock-sim sweep`: one file ([`super::sweep::sweep_one`]) or several
/// ([`sweep_set`]).
pub(crate) fn command(args: SweepArgs) -> ExitCode {
    let opts = Options {
        jobs: super::jobs_or_cores(args.jobs),
        shard: args.shard,
        out: args.out.clone().unwrap_or_default(),
        progress: true,
        fresh: args.fresh,
        stepping: super::stepping(args.every_tick),
    };
    if args.files.len() == 1 && args.expect.is_none() {
        super::sweep::sweep_one(&args.files[0], args.seeds, args.out, opts, args.strict)
    } else {
        let expect = args.expect.as_deref();
        sweep_set(&args.files, args.seeds, args.out, opts, args.strict, expect)
    }
}

/// `sweep FILE... --out DIR` (or one file with `--expect`): every file
/// (whose `expect` is `expect`, when given) is validated first, then swept
/// into `DIR/<name>/` as `sweep FILE --out DIR/<name>` would; `DIR` gets the
/// summary and report of them all. `--strict`: exit 1 when a scenario
/// expected safe had a violation.
pub(crate) fn sweep_set(
    files: &[PathBuf],
    seeds: Option<RangeInclusive<u64>>,
    out: Option<PathBuf>,
    mut opts: Options,
    strict: bool,
    expect: Option<&str>,
) -> ExitCode {
    let Some(dir) = out else {
        eprintln!("redlock-sim sweep: a sweep of several files needs --out DIR (each file is swept into DIR/<name>/)");
        return ExitCode::from(exit::BAD_INPUT);
    };
    if opts.shard.is_some() {
        eprintln!("redlock-sim sweep: --shard sweeps one file; give the files one at a time");
        return ExitCode::from(exit::BAD_INPUT);
    }
    if dir.join("runs.csv").exists() {
        eprintln!(
            "redlock-sim sweep: {} holds the sweep of one scenario; choose another --out for several files",
            dir.display()
        );
        return ExitCode::from(exit::BAD_INPUT);
    }
    let (plans, skipped) = match set_plans(files, seeds.clone(), expect) {
        Ok(p) => p,
        Err(code) => return code,
    };
    // Each scenario's directory is checked before anything runs (another
    // scenario's sweep, another text, other seeds: exit 2), as far as that
    // reads nothing but writes nothing; under --fresh each is checked when
    // its turn comes.
    if !opts.fresh {
        for plan in &plans {
            let sub = dir.join(&plan.base.name);
            let meta = meta::Meta::of(plan, None);
            if let Err(e) = meta::check(&sub, plan, &meta, false) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    eprintln!("redlock-sim sweep: {e}");
                    return ExitCode::from(exit::BAD_INPUT);
                }
            }
        }
    }
    let mut done = Vec::new();
    for plan in &plans {
        println!("== {} ({})", plan.base.name, plan.file);
        opts.out = dir.join(&plan.base.name);
        match run_sweep(plan, &opts) {
            Ok(d) => {
                let violating: u64 = d.summary.iter().map(|r| r.violating_runs).sum();
                println!("runs: {} ({} run now)", d.rows.len(), d.ran);
                println!("violating_runs: {violating}");
                println!("report: {}", opts.out.join("index.html").display());
                done.push(d)
            }
            Err(code) => return code,
        }
    }
    let command = set_command(files, expect, &dir, seeds, strict);
    finished_set(&plans, &done, &skipped, &dir, command, strict)
}

/// The files `--expect` left out, with what each expects.
type Skipped = Vec<(String, Expect)>;

/// The plans of a set, every file validated before anything runs; files
/// whose `expect` is not `expect` are left out (and returned).
fn set_plans(
    files: &[PathBuf],
    seeds: Option<RangeInclusive<u64>>,
    expect: Option<&str>,
) -> Result<(Vec<Arc<Plan>>, Skipped), ExitCode> {
    let mut plans: Vec<Arc<Plan>> = Vec::new();
    let mut skipped = Vec::new();
    for f in files {
        let plan = Plan::load(f, seeds.clone()).map_err(|e| {
            eprintln!("{e}");
            ExitCode::from(exit::BAD_INPUT)
        })?;
        if expect.is_some_and(|e| e != plan.base.expect.as_str()) {
            skipped.push((plan.file.clone(), plan.base.expect));
            continue;
        }
        if ["summary.csv", "report.md", "index.html"].contains(&plan.base.name.as_str()) {
            eprintln!(
                "redlock-sim sweep: {}: the scenario's name {:?} is a file the set writes in DIR; rename the scenario",
                plan.file, plan.base.name
            );
            return Err(ExitCode::from(exit::BAD_INPUT));
        }
        if let Some(other) = plans.iter().find(|p| p.base.name == plan.base.name) {
            eprintln!(
                "redlock-sim sweep: {} and {} are both named {:?}; each file is swept into DIR/<name>/",
                other.file, plan.file, plan.base.name
            );
            return Err(ExitCode::from(exit::BAD_INPUT));
        }
        plans.push(Arc::new(plan));
    }
    if plans.is_empty() {
        eprintln!("redlock-sim sweep: no file left to sweep (--expect left out every one)");
        return Err(ExitCode::from(exit::BAD_INPUT));
    }
    Ok((plans, skipped))
}

/// Writes the set's summary and report, prints its answer and a line per
/// scenario; exit 1 under `strict` when a scenario expected safe violated.
fn finished_set(
    plans: &[Arc<Plan>],
    done: &[Finished],
    skipped: &Skipped,
    dir: &Path,
    command: String,
    strict: bool,
) -> ExitCode {
    let entries: Vec<SetEntry> = plans
        .iter()
        .zip(done)
        .map(|(p, d)| SetEntry {
            scenario: &p.base,
            file: &p.file,
            dir: &p.base.name,
            keys: &p.keys,
            rows: &d.summary,
            seeds: p.seeds.clone(),
        })
        .collect();
    let output = SetOutput {
        entries: &entries,
        skipped,
        command,
    };
    if let Err(e) = write_set(dir, &output) {
        eprintln!(
            "redlock-sim sweep: cannot write the report in {}: {e}",
            dir.display()
        );
        return ExitCode::from(exit::SOFTWARE);
    }
    println!("== all");
    println!("{}", answer(&output));
    println!("report: {}", dir.join("index.html").display());
    let unexpected = plans
        .iter()
        .zip(done)
        .any(|(p, d)| !d.unexpected_violations(&p.base).is_empty());
    if strict && unexpected {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The command line that regenerates a set: the flags, then the files as
/// given (those `--expect` left out too), each quoted for a shell.
fn set_command(
    files: &[PathBuf],
    expect: Option<&str>,
    dir: &Path,
    seeds: Option<RangeInclusive<u64>>,
    strict: bool,
) -> String {
    let mut words = vec!["redlock-sim sweep".to_string()];
    if strict {
        words.push("--strict".into());
    }
    if let Some(e) = expect {
        words.push(format!("--expect {e}"));
    }
    if let Some(s) = seeds {
        words.push(format!("--seeds {}..={}", s.start(), s.end()));
    }
    words.push(format!("--out {}", shell_word(&dir.display().to_string())));
    words.extend(files.iter().map(|f| shell_word(&f.display().to_string())));
    words.join(" ")
}

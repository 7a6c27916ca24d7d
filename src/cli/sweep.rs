//! `redlock-sim sweep FILE` and `merge`: prepare the output directory,
//! run the sweep ([`redlock_harness::sweep`]: [`resume`] says which runs are
//! left) appending each row to `runs.csv` as it
//! comes (a killed sweep keeps them; rerunning skips them), then write
//! `runs.csv` in run order, `summary.csv`, the run reports and the sweep's
//! report from its [`Tally`], print the answer and pick the exit code.

use super::exit;
use super::progress::Progress;
use super::sweep_files::{discard, write_meta, write_rows};
use redlock_harness::scenario::{Expect, Scenario};
use redlock_harness::sim::Stepping;
use redlock_harness::sweep::rows::{self, RunRow};
use redlock_harness::sweep::stats::{SummaryRow, SUMMARY_COLUMNS};
use redlock_harness::sweep::tally::{tally, Coverage, Tally};
use redlock_harness::sweep::{self, meta, resume, run_reports::Replayed, Plan, SCENARIO_COPY};
use redlock_report::sweep::{conclusions, stdout_line, write_sweep, SweepOutput};
use redlock_report::RunOutput;
use std::collections::BTreeSet;
use std::io;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// How a sweep runs.
pub(crate) struct Options {
    pub jobs: usize,
    pub shard: Option<(usize, usize)>,
    pub out: PathBuf,
    /// Print progress (a bar on a terminal, plain lines otherwise).
    pub progress: bool,
    /// Discard what `out` holds of this scenario's sweep and run every run.
    pub fresh: bool,
    /// How each run moves time (the same runs either way).
    pub stepping: Stepping,
}

/// What a finished sweep or merge produced.
pub(crate) struct Finished {
    pub rows: Vec<RunRow>,
    pub(crate) summary: Vec<SummaryRow>,
    pub(crate) conclusions: Vec<String>,
    /// Runs done now (not found already in `runs.csv`).
    pub(crate) ran: usize,
    /// When only part of the sweep is held (a shard, a merge lacking runs).
    pub coverage: Option<Coverage>,
}

impl Finished {
    /// Did a combination violate that should have been safe (the scenario
    /// expects `safe`)? This is what `--strict` fails on.
    pub(crate) fn unexpected_violations(&self, base: &Scenario) -> Vec<&SummaryRow> {
        if base.expect != Expect::Safe {
            return Vec::new();
        }
        self.summary
            .iter()
            .filter(|r| r.violating_runs > 0)
            .collect()
    }
}

/// Runs the sweep, resuming from the rows already in `out/runs.csv` (see
/// [`meta::check`] for what is refused, and what `--fresh` deletes).
pub(crate) fn sweep(plan: &Arc<Plan>, opts: &Options) -> io::Result<Finished> {
    std::fs::create_dir_all(&opts.out).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot create the output directory {}: {e}",
                opts.out.display()
            ),
        )
    })?;
    let meta = meta::Meta::of(plan, opts.shard);
    if meta::check(&opts.out, plan, &meta, opts.fresh)? {
        discard(&opts.out)?;
    }
    let copy = opts.out.join(SCENARIO_COPY);
    if !copy.exists() {
        std::fs::write(&copy, &plan.text)?;
    }
    let path = opts.out.join("runs.csv");
    let done = done_runs(plan, &path)?;
    write_meta(&opts.out, &meta)?;
    let todo = resume::todo(plan, opts.shard, &done);
    let ran = todo.len();
    append_runs(plan, todo, opts, &path)?;
    let rows = rows::read(&path, &plan.keys)?;
    let shards = opts.shard.map(|(k, n)| format!("shard {k}/{n}"));
    let t = tally(plan, rows, false, shards.unwrap_or_default(), opts.jobs)?;
    write_all(plan, t, &opts.out, ran)
}

/// The runs `runs.csv` already holds ([`resume::done_runs`]): a missing
/// file is created with the header, an unfinished last line dropped first.
fn done_runs(plan: &Plan, path: &Path) -> io::Result<BTreeSet<usize>> {
    if !path.exists() {
        let mut w = csv::Writer::from_path(path)?;
        w.write_record(rows::header(&plan.keys))?;
        w.flush()?;
        return Ok(BTreeSet::new());
    }
    truncate_partial_line(path)?;
    resume::done_runs(plan, path)
}

/// Drops the last line of `path` when a killed sweep left it unfinished.
fn truncate_partial_line(path: &Path) -> io::Result<()> {
    let bytes = std::fs::read(path)?;
    if let Some(last) = bytes.iter().rposition(|&b| b == b'\n') {
        if last + 1 != bytes.len() {
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)?
                .set_len(last as u64 + 1)?;
        }
    }
    Ok(())
}

/// Runs `todo` ([`sweep::execute`]), appending each row to `path` as it
/// comes, with progress on stderr.
fn append_runs(plan: &Arc<Plan>, todo: Vec<usize>, opts: &Options, path: &Path) -> io::Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    let file = std::fs::OpenOptions::new().append(true).open(path)?;
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    let mut progress = Progress::new(todo.len(), opts.progress);
    let result = sweep::execute(plan, todo, opts.jobs, opts.stepping, &mut |row: &RunRow| {
        w.write_record(row.fields())?;
        w.flush()?;
        progress.tick(row.verdict == "violation");
        Ok(())
    });
    progress.finish();
    result
}

/// Writes `runs.csv` in run order, `summary.csv`, the run reports and the
/// sweep's report into `out`.
fn write_all(plan: &Plan, t: Tally, out: &Path, ran: usize) -> io::Result<Finished> {
    std::fs::create_dir_all(out)?;
    write_rows(&out.join("runs.csv"), &plan.keys, &t.rows)?;
    write_summary(&out.join("summary.csv"), &plan.keys, &t.summary)?;
    write_run_reports(plan, &t.replayed, out)?;
    let inconclusive = redlock_harness::sweep::inconclusive_runs(&t.rows);
    let output = SweepOutput {
        scenario: &plan.base,
        keys: &plan.keys,
        rows: &t.summary,
        seeds: plan.seeds.clone(),
        total_runs: t.rows.len() as u64,
        file: &plan.file,
        replay: &t.replay,
        caught: &t.caught,
        coverage: t.coverage.as_ref(),
        lab: None,
        inconclusive: &inconclusive,
    };
    write_sweep(out, &output)?;
    let conclusions = conclusions(&output);
    Ok(Finished {
        rows: t.rows,
        summary: t.summary,
        conclusions,
        ran,
        coverage: t.coverage,
    })
}

/// Writes the replayed runs' reports under `out`.
fn write_run_reports(plan: &Plan, replayed: &[Replayed], out: &Path) -> io::Result<()> {
    for r in replayed {
        let output = RunOutput {
            sets: &plan.cells[r.cell].0,
            ..RunOutput::of(&r.run)
        };
        redlock_report::write_run(&out.join(&r.dir), &output)?;
    }
    Ok(())
}

/// Writes `summary.csv`: the varied keys, then [`SUMMARY_COLUMNS`].
pub(super) fn write_summary(path: &Path, keys: &[String], rows: &[SummaryRow]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    let mut header: Vec<String> = keys.to_vec();
    header.extend(SUMMARY_COLUMNS.map(String::from));
    w.write_record(&header)?;
    for r in rows {
        let mut f = r.values.clone();
        f.extend(r.fields());
        w.write_record(&f)?;
    }
    w.flush()
}

/// Why `merge` failed.
#[derive(Debug)]
pub(crate) enum MergeError {
    /// A shard directory is missing, unreadable or of another scenario
    /// (exit code 2).
    BadInput(String),
    /// The outputs could not be written (exit code 70).
    Failed(String),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::BadInput(e) | MergeError::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// `merge DIR... --out DIR`: joins the shards' `runs.csv` (the scenario is
/// read from the first directory's copy) and writes every output. The whole
/// sweep's seeds are those of the shards' `sweep.json` (a directory without
/// one: the copy's `[sweep] seeds`), widened to the seeds seen.
pub(crate) fn merge(dirs: &[PathBuf], out: &Path, jobs: usize) -> Result<Finished, MergeError> {
    let (plan, rows, shards) = sweep::read_shards(dirs).map_err(MergeError::BadInput)?;
    let failed = |e: io::Error| {
        MergeError::Failed(format!(
            "cannot write the outputs to {}: {e}",
            out.display()
        ))
    };
    // A run report that does not replay to its row's trace: the shards were
    // made by another version, or edited (bad input; nothing is written).
    let done = tally(&plan, rows, true, shards, jobs).and_then(|t| write_all(&plan, t, out, 0));
    let done = done.map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidData {
            MergeError::BadInput(format!("{}: {e}", dirs_shown(dirs)))
        } else {
            failed(e)
        }
    })?;
    // What a sweep leaves for a later merge: the scenario and the whole
    // sweep's seeds (so a merge of this merge knows the whole).
    std::fs::write(out.join(SCENARIO_COPY), &plan.text).map_err(failed)?;
    write_meta(out, &meta::Meta::of(&plan, None)).map_err(failed)?;
    Ok(done)
}

/// The merged directories, for messages.
fn dirs_shown(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `sweep FILE`: one scenario's sweep into `out` (default
/// `reports/<name>/`).
pub(crate) fn sweep_one(
    file: &Path,
    seeds: Option<RangeInclusive<u64>>,
    out: Option<PathBuf>,
    mut opts: Options,
    strict: bool,
) -> ExitCode {
    let plan = match Plan::load(file, seeds) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(exit::BAD_INPUT);
        }
    };
    opts.out = out.unwrap_or_else(|| PathBuf::from("reports").join(&plan.base.name));
    if holds_a_set(&opts.out) {
        eprintln!(
            "redlock-sim sweep: {} holds a sweep of several files; choose another --out for one file",
            opts.out.display()
        );
        return ExitCode::from(exit::BAD_INPUT);
    }
    match run_sweep(&plan, &opts) {
        Ok(done) => finished_sweep(&done, &opts.out, strict.then_some(&plan.base)),
        Err(code) => code,
    }
}

/// Does `dir` hold the outputs of a sweep of several files (its
/// `summary.csv` starts with the set's columns)?
fn holds_a_set(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("summary.csv"))
        .is_ok_and(|t| t.starts_with(&(redlock_report::set::SET_COLUMNS.join(",") + ",")))
}

/// Runs one plan's sweep; an error is printed and mapped to its exit code.
pub(crate) fn run_sweep(plan: &Arc<Plan>, opts: &Options) -> Result<Finished, ExitCode> {
    sweep(plan, opts).map_err(|e| {
        eprintln!("redlock-sim sweep: {e}");
        // --out holds another sweep's files (nothing touched), or rows of
        // runs.csv that do not replay to their trace (made by another
        // version of the program, or edited): bad input.
        match e.kind() {
            std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => {
                ExitCode::from(exit::BAD_INPUT)
            }
            _ => ExitCode::from(exit::SOFTWARE),
        }
    })
}

/// Prints what a sweep or merge produced; with `strict`, exit 1 when a
/// combination of a scenario expected safe had a violation.
pub(crate) fn finished_sweep(done: &Finished, out: &Path, strict: Option<&Scenario>) -> ExitCode {
    let violating: u64 = done.summary.iter().map(|r| r.violating_runs).sum();
    println!("runs: {} ({} run now)", done.rows.len(), done.ran);
    if let Some(c) = &done.coverage {
        println!("{}", stdout_line(c));
    }
    println!("violating_runs: {violating}");
    for c in &done.conclusions {
        println!("- {c}");
    }
    println!("report: {}", out.join("index.html").display());
    match strict {
        Some(base) if !done.unexpected_violations(base).is_empty() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

//! Sweeps: every seed × every combination of `[sweep.vary]`, on many threads.
//!
//! A sweep's runs are numbered in (combination, seed) order, the first varied
//! key changing slowest. `--shard K/N` takes every N-th run starting at the
//! K-th, so shards are equal in size and mix cheap and costly combinations.
//! Each run is an independent turmoil simulation built inside its worker
//! thread. Finished rows are appended to `runs.csv` at once (a killed sweep
//! keeps them; rerunning skips them); at the end the file is rewritten in
//! run order, so it is byte-identical (but `wall_ms`) whatever `--jobs` was,
//! and `summary.csv` and the report are computed from it. `merge` joins the
//! `runs.csv` of shards and writes exactly what one sweep would have.

pub mod baseline;
pub mod meta;
pub mod pool;
pub mod rows;
pub mod run_reports;
pub mod stats;

use crate::report::sweep::{write_sweep, Coverage, SweepOutput};
use crate::runner;
use crate::scenario::{self, Expect, Scenario, ScenarioError};
use rows::RunRow;
use stats::SummaryRow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, IsTerminal, Write};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// Seeds of a sweep when the file has no `[sweep]` and no `--seeds` is given.
pub const DEFAULT_SEEDS: RangeInclusive<u64> = 1..=100;
/// Worker threads at most, whatever `--jobs` asks.
pub const MAX_JOBS: usize = 256;
/// Runs in one sweep at most.
pub const MAX_RUNS: u64 = 100_000_000;
/// Violating seeds listed per combination in the report, each with its run
/// report under `DIR/runs/`.
pub const REPLAY_SEEDS: usize = 3;
/// The copy of the scenario a sweep leaves in its directory, for `merge`.
pub const SCENARIO_COPY: &str = "scenario.toml";

/// A combination: its overrides, and its values as written.
pub type Cell = (Vec<(String, toml::Value)>, Vec<String>);

/// What to sweep: the scenario, its combinations and seeds.
pub struct Plan {
    /// The scenario file's text and the name it is known by in messages.
    pub text: String,
    pub file: String,
    pub base: Scenario,
    /// Varied keys, in `[sweep.vary]` order.
    pub keys: Vec<String>,
    /// Each combination: the overrides, and the values as written.
    pub cells: Vec<Cell>,
    pub seeds: RangeInclusive<u64>,
}

impl Plan {
    /// Reads and validates `file` (every combination); `seeds` overrides
    /// `[sweep] seeds`.
    pub fn load(file: &Path, seeds: Option<RangeInclusive<u64>>) -> Result<Plan, ScenarioError> {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).map_err(|e| ScenarioError {
            file: name.clone(),
            key: String::new(),
            line: None,
            message: format!("cannot read the scenario file: {e}"),
        })?;
        Plan::from_text(text, name, seeds)
    }

    pub fn from_text(
        text: String,
        file: String,
        seeds: Option<RangeInclusive<u64>>,
    ) -> Result<Plan, ScenarioError> {
        let base = scenario::check_sweep(&text, &file)?;
        let (keys, cells, file_seeds) = match &base.sweep {
            Some(sw) => {
                let keys: Vec<String> = sw.vary.iter().map(|(k, _)| k.clone()).collect();
                let cells = (0..sw.cell_count())
                    .filter_map(|i| sw.cell(i))
                    .map(|c| {
                        let shown = c
                            .iter()
                            .map(|(_, v)| scenario::render_vary_value(v))
                            .collect();
                        (c, shown)
                    })
                    .collect();
                (keys, cells, sw.seeds.clone())
            }
            None => (Vec::new(), vec![(Vec::new(), Vec::new())], DEFAULT_SEEDS),
        };
        Ok(Plan {
            text,
            file,
            base,
            keys,
            cells,
            seeds: seeds.unwrap_or(file_seeds),
        })
    }

    pub fn seed_count(&self) -> usize {
        (self.seeds.end() - self.seeds.start() + 1) as usize
    }

    pub fn total_runs(&self) -> usize {
        self.cells.len() * self.seed_count()
    }

    /// The combination and seed of run `i`.
    pub fn run_at(&self, i: usize) -> (usize, u64) {
        let n = self.seed_count();
        (i / n, self.seeds.start() + (i % n) as u64)
    }

    /// The run number of a row, if the row belongs to this plan.
    fn index_of(&self, by_values: &BTreeMap<&[String], usize>, row: &RunRow) -> Option<usize> {
        let cell = *by_values.get(row.values.as_slice())?;
        if !self.seeds.contains(&row.seed) {
            return None;
        }
        Some(cell * self.seed_count() + (row.seed - self.seeds.start()) as usize)
    }

    fn cell_index(&self) -> BTreeMap<&[String], usize> {
        self.cells
            .iter()
            .enumerate()
            .map(|(i, (_, v))| (v.as_slice(), i))
            .collect()
    }

    /// Runs one run (in the calling thread).
    pub fn run_one(&self, i: usize) -> Result<RunRow, String> {
        let (cell, seed) = self.run_at(i);
        let (overrides, shown) = &self.cells[cell];
        let s = scenario::parse_with_overrides(&self.text, &self.file, overrides)
            .map_err(|e| e.to_string())?;
        let run = runner::simulate(s, seed).map_err(|e| e.to_string())?;
        Ok(RunRow::from_run(&run, shown.clone()))
    }
}

/// Parses `--seeds`: `A..=B`, or `N` for `1..=N`.
pub fn parse_seeds(text: &str) -> Result<RangeInclusive<u64>, String> {
    let bad = || format!("--seeds: \"{text}\" is not a seed range: write A..=B (or N for 1..=N)");
    let range = match text.split_once("..=") {
        Some((a, b)) => {
            a.trim().parse().map_err(|_| bad())?..=b.trim().parse().map_err(|_| bad())?
        }
        None => 1..=text.trim().parse().map_err(|_| bad())?,
    };
    if range.is_empty() {
        return Err(format!("--seeds: {text} is empty"));
    }
    Ok(range)
}

/// Parses `--shard K/N` (1 ≤ K ≤ N).
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard: \"{text}\" is not K/N with 1 <= K <= N");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// How a sweep runs.
pub struct Options {
    pub jobs: usize,
    pub shard: Option<(usize, usize)>,
    pub out: PathBuf,
    /// Print progress (a bar on a terminal, plain lines otherwise).
    pub progress: bool,
    /// Discard what `out` holds of this scenario's sweep and run every run.
    pub fresh: bool,
}

/// What a finished sweep or merge produced.
pub struct Finished {
    pub rows: Vec<RunRow>,
    pub summary: Vec<SummaryRow>,
    pub conclusions: Vec<String>,
    /// Runs done now (not found already in `runs.csv`).
    pub ran: usize,
    /// When only part of the sweep is held (a shard, a merge lacking runs).
    pub coverage: Option<Coverage>,
}

impl Finished {
    /// Did a combination violate that should have been safe (the scenario
    /// expects `safe`)? This is what `--strict` fails on.
    pub fn unexpected_violations(&self, base: &Scenario) -> Vec<&SummaryRow> {
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
/// [`meta::prepare`] for what is refused, and what `--fresh` deletes).
pub fn sweep(plan: &Arc<Plan>, opts: &Options) -> io::Result<Finished> {
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
    meta::prepare(&opts.out, plan, &meta, opts.fresh)?;
    let copy = opts.out.join(SCENARIO_COPY);
    if !copy.exists() {
        std::fs::write(&copy, &plan.text)?;
    }
    let path = opts.out.join("runs.csv");
    let by_values = plan.cell_index();
    let mut done = BTreeSet::new();
    if path.exists() {
        truncate_partial_line(&path)?;
        for row in rows::read(&path, &plan.keys)? {
            match plan.index_of(&by_values, &row) {
                Some(i) => done.insert(i),
                // Never drop finished runs: a different sweep wrote these.
                None => {
                    // Bad input (exit 2): --out is another sweep's.
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                        "{} holds runs of another sweep (seed {} with {:?}); choose another --out",
                        path.display(),
                        row.seed,
                        row.values
                    ),
                    ));
                }
            };
        }
    } else {
        let mut w = csv::Writer::from_path(&path)?;
        w.write_record(rows::header(&plan.keys))?;
        w.flush()?;
    }
    meta::write(&opts.out, &meta)?;
    let todo: Vec<usize> = (0..plan.total_runs())
        .filter(|i| opts.shard.is_none_or(|(k, n)| i % n == k - 1))
        .filter(|i| !done.contains(i))
        .collect();
    let ran = todo.len();
    execute(plan, todo, opts, &path)?;
    let rows = rows::read(&path, &plan.keys)?;
    let shards = opts.shard.map(|(k, n)| format!("shard {k}/{n}"));
    finish(
        plan,
        rows,
        &opts.out,
        ran,
        false,
        shards.unwrap_or_default(),
        opts.jobs,
    )
}

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

/// Runs `todo` on `jobs` worker threads, appending each row as it comes.
fn execute(plan: &Arc<Plan>, todo: Vec<usize>, opts: &Options, path: &Path) -> io::Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    let total = todo.len();
    let todo = Arc::new(todo);
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel::<Result<RunRow, String>>();
    let workers = (0..opts.jobs.clamp(1, total.min(MAX_JOBS)))
        .map(|_| {
            let (plan, todo, next, tx) = (plan.clone(), todo.clone(), next.clone(), tx.clone());
            std::thread::Builder::new()
                .stack_size(pool::STACK)
                .spawn(move || loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&i) = todo.get(k) else { return };
                    if tx.send(plan.run_one(i)).is_err() {
                        return;
                    }
                })
        })
        .collect::<io::Result<Vec<_>>>()?;
    drop(tx);
    let file = std::fs::OpenOptions::new().append(true).open(path)?;
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    let mut progress = Progress::new(total, opts.progress);
    let mut failure = None;
    for result in rx {
        match result {
            Ok(row) => {
                w.write_record(row.fields())?;
                w.flush()?;
                progress.tick(row.verdict == "violation");
            }
            Err(e) => {
                failure.get_or_insert(e);
                next.store(usize::MAX / 2, Ordering::SeqCst);
            }
        }
    }
    progress.finish();
    for h in workers {
        if h.join().is_err() {
            failure.get_or_insert_with(|| "a sweep worker panicked".to_string());
        }
    }
    match failure {
        Some(e) => Err(io::Error::other(e)),
        None => Ok(()),
    }
}

/// Sorts the rows into run order, writes `runs.csv`, `summary.csv` and the
/// report into `out`. `merged` and `shards` (which shards are held, in
/// words) describe the rows when they are fewer than the plan's runs.
pub fn finish(
    plan: &Plan,
    rows: Vec<RunRow>,
    out: &Path,
    ran: usize,
    merged: bool,
    shards: String,
    jobs: usize,
) -> io::Result<Finished> {
    let by_values = plan.cell_index();
    let mut indexed: BTreeMap<usize, RunRow> = BTreeMap::new();
    for row in rows {
        if let Some(i) = plan.index_of(&by_values, &row) {
            indexed.entry(i).or_insert(row);
        }
    }
    let rows: Vec<RunRow> = indexed.into_values().collect();
    let summary: Vec<SummaryRow> = plan
        .cells
        .iter()
        .map(|(_, shown)| {
            let mine: Vec<&RunRow> = rows.iter().filter(|r| &r.values == shown).collect();
            stats::summarize(shown.clone(), &mine)
        })
        .filter(|s| s.runs > 0)
        .collect();
    // The first violating seeds of each combination, with their reports.
    let mut wanted = Vec::new();
    let mut replay: Vec<crate::report::sweep::Replay> = Vec::new();
    for (cell, (_, shown)) in plan.cells.iter().enumerate() {
        let seeds: Vec<(u64, String)> = rows
            .iter()
            .filter(|r| &r.values == shown && r.verdict == "violation")
            .take(REPLAY_SEEDS)
            .map(|r| {
                wanted.push(run_reports::Wanted {
                    cell,
                    seed: r.seed,
                    trace: r.trace.clone(),
                });
                (r.seed, run_reports::link(plan, cell, r.seed))
            })
            .collect();
        if !seeds.is_empty() {
            replay.push((shown.clone(), seeds));
        }
    }
    let caught = baseline::against_spec(&plan.keys, &rows);
    // A variant's first catch against the spec client gets its report too.
    for c in &caught {
        let Some(&seed) = c.seeds.first() else {
            continue;
        };
        let Some(cell) = plan.cells.iter().position(|(_, v)| *v == c.values) else {
            continue;
        };
        let Some(row) = rows.iter().find(|r| r.values == c.values && r.seed == seed) else {
            continue;
        };
        let listed = replay.iter_mut().find(|(v, _)| *v == c.values);
        let Some((_, seeds)) = listed else { continue };
        if !seeds.iter().any(|(s, _)| *s == seed) {
            seeds.push((seed, run_reports::link(plan, cell, seed)));
            wanted.push(run_reports::Wanted {
                cell,
                seed,
                trace: row.trace.clone(),
            });
        }
    }
    // Every run report is replayed and checked before anything is written.
    let replayed = run_reports::replay(plan, &wanted, jobs).map_err(|e| match e {
        run_reports::ReplayError::Mismatch(m) => io::Error::new(io::ErrorKind::InvalidData, m),
        run_reports::ReplayError::Failed(m) => io::Error::other(m),
    })?;
    std::fs::create_dir_all(out)?;
    rows::write(&out.join("runs.csv"), &plan.keys, &rows)?;
    write_summary(&out.join("summary.csv"), &plan.keys, &summary)?;
    run_reports::write(plan, &replayed, out)?;
    let coverage = (rows.len() < plan.total_runs()).then(|| Coverage {
        held: rows.len() as u64,
        total: plan.total_runs() as u64,
        shards,
        merged,
    });
    let output = SweepOutput {
        scenario: &plan.base,
        keys: &plan.keys,
        rows: &summary,
        seeds: plan.seeds.clone(),
        total_runs: rows.len() as u64,
        file: &plan.file,
        replay: &replay,
        caught: &caught,
        coverage: coverage.as_ref(),
    };
    write_sweep(out, &output)?;
    let conclusions = crate::report::sweep::conclusions(&output);
    Ok(Finished {
        rows,
        summary,
        conclusions,
        ran,
        coverage,
    })
}

fn write_summary(path: &Path, keys: &[String], rows: &[SummaryRow]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    let mut header: Vec<String> = keys.to_vec();
    header.extend(stats::SUMMARY_COLUMNS.map(String::from));
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
pub enum MergeError {
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
pub fn merge(dirs: &[PathBuf], out: &Path, jobs: usize) -> Result<Finished, MergeError> {
    let (plan, rows, shards) = merge_read(dirs).map_err(MergeError::BadInput)?;
    let failed = |e: io::Error| {
        MergeError::Failed(format!(
            "cannot write the outputs to {}: {e}",
            out.display()
        ))
    };
    // A run report that does not replay to its row's trace: the shards were
    // made by another version, or edited (bad input; nothing is written).
    let done = finish(&plan, rows, out, 0, true, shards, jobs).map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidData {
            MergeError::BadInput(format!("{}: {e}", dirs_shown(dirs)))
        } else {
            failed(e)
        }
    })?;
    // What a sweep leaves for a later merge: the scenario and the whole
    // sweep's seeds (so a merge of this merge knows the whole).
    std::fs::write(out.join(SCENARIO_COPY), &plan.text).map_err(failed)?;
    meta::write(out, &meta::Meta::of(&plan, None)).map_err(failed)?;
    Ok(done)
}

/// The merged directories, for messages.
fn dirs_shown(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads the shards of a merge: the plan, every row, and which shards they
/// are (in words, see [`meta::merge_parts`]).
fn merge_read(dirs: &[PathBuf]) -> Result<(Plan, Vec<RunRow>, String), String> {
    let first = dirs.first().ok_or("merge needs at least one directory")?;
    let copy = first.join(SCENARIO_COPY);
    let text = std::fs::read_to_string(&copy).map_err(|e| format!("{}: {e}", copy.display()))?;
    let mut rows = Vec::new();
    let mut seeds: Option<RangeInclusive<u64>> = None;
    let widen = |s: Option<RangeInclusive<u64>>, r: &RangeInclusive<u64>| {
        Some(match s {
            None => r.clone(),
            Some(s) => (*s.start()).min(*r.start())..=(*s.end()).max(*r.end()),
        })
    };
    let mut parts = Vec::new();
    for d in dirs {
        let other = std::fs::read_to_string(d.join(SCENARIO_COPY))
            .map_err(|e| format!("{}: {e}", d.display()))?;
        if other != text {
            return Err(format!(
                "{}: a shard of another scenario than {}",
                d.display(),
                first.display()
            ));
        }
        let plan = Plan::from_text(text.clone(), copy.display().to_string(), None)
            .map_err(|e| e.to_string())?;
        let part = rows::read(&d.join("runs.csv"), &plan.keys).map_err(|e| e.to_string())?;
        let meta = meta::read(d)?;
        seeds = widen(
            seeds,
            &meta.as_ref().map_or(plan.seeds.clone(), |m| m.seeds()),
        );
        for r in &part {
            seeds = widen(seeds, &(r.seed..=r.seed));
        }
        parts.push((d.display().to_string(), meta, part.len()));
        rows.extend(part);
    }
    if let Some(s) = &seeds {
        let cells = Plan::from_text(text.clone(), String::new(), None)
            .map_err(|e| e.to_string())?
            .cells
            .len() as u64;
        if (s.end() - s.start())
            .saturating_add(1)
            .saturating_mul(cells)
            > MAX_RUNS
        {
            return Err(format!(
                "the shards' seeds {}..={} make more than {MAX_RUNS} runs",
                s.start(),
                s.end()
            ));
        }
    }
    let plan =
        Plan::from_text(text, copy.display().to_string(), seeds).map_err(|e| e.to_string())?;
    Ok((plan, rows, meta::merge_parts(&parts)))
}

/// Progress: a bar on a terminal, plain lines every 10% otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    done: usize,
    violations: usize,
    start: Instant,
    shown: bool,
}

impl Progress {
    fn new(total: usize, show: bool) -> Progress {
        let bar = (show && io::stderr().is_terminal()).then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} runs, {msg}, {per_sec}, {eta} left",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            violations: 0,
            start: Instant::now(),
            shown: show,
        }
    }

    fn tick(&mut self, violation: bool) {
        self.done += 1;
        self.violations += violation as usize;
        if let Some(b) = &self.bar {
            b.set_message(format!("{} violating", self.violations));
            b.inc(1);
        } else if self.shown
            && (self.done * 10 / self.total != (self.done - 1) * 10 / self.total
                || self.done == self.total)
        {
            let secs = self.start.elapsed().as_secs_f64();
            let rate = self.done as f64 / secs.max(1e-9);
            let left = (self.total - self.done) as f64 / rate.max(1e-9);
            let _ = writeln!(
                io::stderr(),
                "{}/{} runs, {} violating, {rate:.1} runs/s, {left:.0}s left",
                self.done,
                self.total,
                self.violations
            );
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish();
        }
    }
}

//! Sweeps: every seed × every combination of `[sweep.vary]`, on many threads.
//!
//! A sweep's runs are numbered in (combination, seed) order, the first varied
//! key changing slowest. `--shard K/N` takes every N-th run starting at the
//! K-th, so shards are equal in size and mix cheap and costly combinations.
//! Each run is an independent turmoil simulation built inside its worker
//! thread; [`execute`] hands each finished row to the caller as it comes
//! (the command layer appends it to `runs.csv` at once, so a killed sweep
//! keeps it). [`tally::tally`] puts the rows in run order, so the outputs
//! are byte-identical (but `wall_ms`) whatever `--jobs` was, and computes
//! the summary and the run reports' runs from them. [`read_shards`] reads
//! the shards a `merge` joins; [`resume`] which runs a sweep has left to
//! do. Nothing here writes a file (the command
//! layer does, `cli::sweep` and `cli::sweep_files`).

pub mod baseline;
pub mod compare;
pub mod lab;
pub(crate) mod lanes;
pub mod matrix;
pub mod meta;
pub(crate) mod pool;
pub mod resume;
pub mod rows;
pub mod run_reports;
pub mod settle;
pub mod stats;
pub mod tally;

use crate::runner;
use crate::scenario::{self, Scenario, ScenarioError};
use crate::sim::workload::LockCode;
use crate::sim::Stepping;
use rows::RunRow;
use std::collections::BTreeMap;
use std::io;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

/// Seeds of a sweep when the file has no `[sweep]` and no `--seeds` is given.
pub(crate) const DEFAULT_SEEDS: RangeInclusive<u64> = 1..=100;
/// Worker threads at most, whatever `--jobs` asks.
pub const MAX_JOBS: usize = 256;
/// Runs in one sweep at most.
pub(crate) const MAX_RUNS: u64 = 100_000_000;
/// Violating seeds listed per combination in the report, each with its run
/// report under `DIR/runs/`.
pub(crate) const REPLAY_SEEDS: usize = 3;
/// The copy of the scenario a sweep leaves in its directory, for `merge`.
pub const SCENARIO_COPY: &str = "scenario.toml";

/// A combination: its overrides, and its values as written.
pub(crate) type Cell = (Vec<(String, toml::Value)>, Vec<String>);

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
        let plan = Plan {
            text,
            file,
            base,
            keys,
            cells,
            seeds: seeds.unwrap_or(file_seeds),
        };
        // Every combination is one cell, and no two show alike (each key's
        // values render distinctly): a row's values name one cell.
        assert!(
            plan.cells.len() == plan.base.sweep.as_ref().map_or(1, |s| s.cell_count())
                && plan.cell_index().len() == plan.cells.len(),
            "{}: {} cells, {} distinct",
            plan.file,
            plan.cells.len(),
            plan.cell_index().len()
        );
        // `--seeds`, `[sweep] seeds` and `sweep.json` are checked non-empty.
        assert!(
            !plan.seeds.is_empty(),
            "{}: no seeds in {:?}",
            plan.file,
            plan.seeds
        );
        Ok(plan)
    }

    pub fn seed_count(&self) -> usize {
        (self.seeds.end() - self.seeds.start() + 1) as usize
    }

    pub fn total_runs(&self) -> usize {
        self.cells.len() * self.seed_count()
    }

    /// The combination and seed of run `i`.
    pub fn run_at(&self, i: usize) -> (usize, u64) {
        assert!(
            i < self.total_runs(),
            "run {i} of a sweep of {}",
            self.total_runs()
        );
        let n = self.seed_count();
        (i / n, self.seeds.start() + (i % n) as u64)
    }

    /// The run number of a row, if the row belongs to this plan.
    pub fn index_of(&self, by_values: &BTreeMap<&[String], usize>, row: &RunRow) -> Option<usize> {
        let cell = *by_values.get(row.values.as_slice())?;
        if !self.seeds.contains(&row.seed) {
            return None;
        }
        let i = cell * self.seed_count() + (row.seed - self.seeds.start()) as usize;
        // One run per (combination, seed), and back.
        assert_eq!(
            self.run_at(i),
            (cell, row.seed),
            "run {i} of {:?} seed {}",
            row.values,
            row.seed
        );
        Some(i)
    }

    /// Each combination's shown values, to its index.
    pub fn cell_index(&self) -> BTreeMap<&[String], usize> {
        self.cells
            .iter()
            .enumerate()
            .map(|(i, (_, v))| (v.as_slice(), i))
            .collect()
    }

    /// Runs one run (in the calling thread), time moved by `stepping`.
    pub fn run_one(&self, i: usize, stepping: Stepping) -> Result<RunRow, String> {
        let (cell, seed) = self.run_at(i);
        let (overrides, shown) = &self.cells[cell];
        let s = scenario::parse_with_overrides(&self.text, &self.file, overrides)
            .map_err(|e| e.to_string())?;
        let run = runner::simulate_stepping(s, seed, false, &LockCode::BuiltIn, stepping)
            .map_err(|e| e.to_string())?;
        Ok(RunRow::from_run(&run, shown.clone()))
    }
}

/// The inconclusive runs among `rows`, in their order: values, seed, why.
pub fn inconclusive_runs(rows: &[RunRow]) -> Vec<(Vec<String>, u64, String)> {
    rows.iter()
        .filter(|r| !r.conclusive())
        .map(|r| (r.values.clone(), r.seed, r.inconclusive.clone()))
        .collect()
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

/// Runs the runs `todo` (indices into the plan's runs), time moved by
/// `stepping`, on `jobs` worker threads, handing each finished row to `on_row` in this thread as it
/// comes (in completion order). Past the first failure (a run's or
/// `on_row`'s) no other run starts; once the workers stop, `on_row`'s
/// failure is returned, else the run's.
pub fn execute(
    plan: &Arc<Plan>,
    todo: Vec<usize>,
    jobs: usize,
    stepping: Stepping,
    on_row: &mut dyn FnMut(&RunRow) -> io::Result<()>,
) -> io::Result<()> {
    if todo.is_empty() {
        return Ok(());
    }
    let total = todo.len();
    let todo = Arc::new(todo);
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel::<Result<RunRow, String>>();
    let workers = (0..jobs.clamp(1, total.min(MAX_JOBS)))
        .map(|_| {
            let (plan, todo, next, tx) = (plan.clone(), todo.clone(), next.clone(), tx.clone());
            std::thread::Builder::new()
                .stack_size(pool::STACK)
                .spawn(move || loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&i) = todo.get(k) else { return };
                    if tx.send(plan.run_one(i, stepping)).is_err() {
                        return;
                    }
                })
        })
        .collect::<io::Result<Vec<_>>>()?;
    drop(tx);
    // A run's failure stops new runs; a failure of `on_row` (writing) also
    // stops handing rows over, and is the one returned.
    let (mut failed_run, mut failed_row): (Option<io::Error>, Option<io::Error>) = (None, None);
    let mut handed = 0;
    for result in rx {
        match result {
            Ok(row) if failed_row.is_none() => {
                handed += 1;
                if let Err(e) = on_row(&row) {
                    failed_row = Some(e);
                    next.store(usize::MAX / 2, Ordering::SeqCst);
                }
            }
            Ok(_) => {}
            Err(e) => {
                failed_run.get_or_insert(io::Error::other(e));
                next.store(usize::MAX / 2, Ordering::SeqCst);
            }
        }
    }
    for h in workers {
        if h.join().is_err() {
            failed_run.get_or_insert_with(|| io::Error::other("a sweep worker panicked"));
        }
    }
    match failed_row.or(failed_run) {
        Some(e) => Err(e),
        None => {
            // Every worker took runs until none was left.
            assert_eq!(handed, total, "a sweep without failures lost runs");
            Ok(())
        }
    }
}

/// Reads the shards of a merge: the plan, every row, and which shards they
/// are (in words, see [`meta::merge_parts`]).
pub fn read_shards(dirs: &[PathBuf]) -> Result<(Plan, Vec<RunRow>, String), String> {
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

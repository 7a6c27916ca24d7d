//! What a sweep's rows add up to, before anything is written: the rows in
//! run order, one summary row per combination, the violating runs each
//! combination's report lists (replayed and checked against their traces),
//! the variants caught against the spec client, and how much of the sweep
//! the rows hold. The command layer writes it all.

use super::baseline::{self, Caught};
use super::rows::RunRow;
use super::run_reports::{self, Replayed, Wanted};
use super::stats::{self, SummaryRow};
use super::{Plan, REPLAY_SEEDS};
use std::collections::BTreeMap;
use std::io;

/// How much of its sweep a report holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Runs held (rows of `runs.csv`).
    pub held: u64,
    /// Runs of the whole sweep (combinations × seeds).
    pub total: u64,
    /// Which shards, in words: `shard 1/2` for one sweep shard, `shards 1,
    /// 3 of 4 present; missing: 2, 4` for a merge.
    pub shards: String,
    /// A merge (true) or one `sweep --shard` (false).
    pub merged: bool,
}

/// A combination's values and its first violating seeds, each with the
/// path of its run report's `index.html` relative to the sweep's directory
/// (`None`: the run's report was not kept, see `matrix --keep-runs`).
pub type Replay = (Vec<String>, Vec<(u64, Option<String>)>);

/// A sweep's rows and everything computed from them.
pub struct Tally {
    /// The rows in run order, one per run (the first of duplicates kept).
    pub rows: Vec<RunRow>,
    /// One row per combination that has runs, in sweep order.
    pub summary: Vec<SummaryRow>,
    /// Each combination's listed violating runs: seed and report link.
    pub replay: Vec<Replay>,
    /// The variants caught against the spec client.
    pub caught: Vec<Caught>,
    /// The listed runs, replayed to their recorded traces.
    pub replayed: Vec<Replayed>,
    /// When the rows hold only part of the sweep.
    pub coverage: Option<Coverage>,
}

/// Sorts `rows` into run order and computes everything the outputs are
/// made from; the listed violating runs are replayed on `jobs` threads and
/// checked against their traces (a mismatch: `InvalidData`). `merged` and
/// `shards` (which shards are held, in words) describe the rows when they
/// are fewer than the plan's runs.
pub fn tally(
    plan: &Plan,
    rows: Vec<RunRow>,
    merged: bool,
    shards: String,
    jobs: usize,
) -> io::Result<Tally> {
    let rows = in_run_order(plan, rows);
    // One row per run: never more rows than runs.
    assert!(
        rows.len() <= plan.total_runs(),
        "{} rows of a sweep of {} runs",
        rows.len(),
        plan.total_runs()
    );
    let summary: Vec<SummaryRow> = plan
        .cells
        .iter()
        .map(|(_, shown)| {
            let mine: Vec<&RunRow> = rows.iter().filter(|r| &r.values == shown).collect();
            stats::summarize(shown.clone(), &mine)
        })
        .filter(|s| s.runs > 0)
        .collect();
    // Every row is a run of the plan, so the combinations hold them all.
    assert_eq!(
        summary.iter().map(|s| s.runs).sum::<u64>(),
        rows.len() as u64,
        "sweep: the summary does not count every row (a bug in redlock-sim)"
    );
    let (mut replay, mut wanted) = first_violations(plan, &rows);
    let caught = baseline::against_spec(&plan.keys, &rows);
    first_catches(plan, &rows, &caught, &mut replay, &mut wanted);
    // Every run report is replayed and checked before anything is written.
    let replayed = run_reports::replay(plan, &wanted, jobs).map_err(|e| match e {
        run_reports::ReplayError::Mismatch(m) => io::Error::new(io::ErrorKind::InvalidData, m),
        run_reports::ReplayError::Failed(m) => io::Error::other(m),
    })?;
    let coverage = (rows.len() < plan.total_runs()).then(|| Coverage {
        held: rows.len() as u64,
        total: plan.total_runs() as u64,
        shards,
        merged,
    });
    Ok(Tally {
        rows,
        summary,
        replay,
        caught,
        replayed,
        coverage,
    })
}

/// The rows in run order, one per run of the plan (the first of duplicates
/// kept; rows of no run of the plan dropped).
fn in_run_order(plan: &Plan, rows: Vec<RunRow>) -> Vec<RunRow> {
    let by_values = plan.cell_index();
    let mut indexed: BTreeMap<usize, RunRow> = BTreeMap::new();
    for row in rows {
        if let Some(i) = plan.index_of(&by_values, &row) {
            indexed.entry(i).or_insert(row);
        }
    }
    indexed.into_values().collect()
}

/// The first [`REPLAY_SEEDS`] violating seeds of each combination, with
/// their report links, and the runs to replay for them.
fn first_violations(plan: &Plan, rows: &[RunRow]) -> (Vec<Replay>, Vec<Wanted>) {
    let mut wanted = Vec::new();
    let mut replay: Vec<Replay> = Vec::new();
    for (cell, (_, shown)) in plan.cells.iter().enumerate() {
        let seeds: Vec<(u64, Option<String>)> = rows
            .iter()
            .filter(|r| &r.values == shown && r.verdict == "violation")
            .take(REPLAY_SEEDS)
            .map(|r| {
                wanted.push(Wanted {
                    cell,
                    seed: r.seed,
                    trace: r.trace.clone(),
                });
                (r.seed, Some(run_reports::link(plan, cell, r.seed)))
            })
            .collect();
        if !seeds.is_empty() {
            replay.push((shown.clone(), seeds));
        }
    }
    (replay, wanted)
}

/// A variant's first catch against the spec client gets its report too.
fn first_catches(
    plan: &Plan,
    rows: &[RunRow],
    caught: &[Caught],
    replay: &mut [Replay],
    wanted: &mut Vec<Wanted>,
) {
    for c in caught {
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
            seeds.push((seed, Some(run_reports::link(plan, cell, seed))));
            wanted.push(Wanted {
                cell,
                seed,
                trace: row.trace.clone(),
            });
        }
    }
}

//! A lab sweep: every seed a lab run of its own ([`crate::runner::lab`]),
//! `jobs` at once, each with its own ports. Each run is handed to the
//! caller as it ends (the command layer writes its report at once: the lab
//! cannot replay a run), then made a row. With the stopping rule
//! ([`super::settle`]) the seeds stop where the cell's verdict is settled.

use super::pool::map_prefix;
use super::rows::RunRow;
use super::settle::{settled, stop_point, Stop};
use crate::runner::lab::{run_lab, LabFailure, LabRun, Servers};
use crate::scenario::Scenario;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

/// What a lab sweep ran.
pub struct Swept {
    /// The rows, in seed order.
    pub rows: Vec<RunRow>,
    /// Why it stopped where it did.
    pub stop: Stop,
    /// Seeds past the stop that had started, ran and were dropped (their
    /// directories were written: the caller removes them).
    pub dropped: Vec<u64>,
}

/// Runs the seeds of `seeds` in order, each seed's client logs in
/// `dir/seed-<N>/clients/`, handing each run as it ends (or why it could
/// not be made) to `each`, with its directory; with `stop_early`, no
/// further than the cell's verdict is settled. The rows in seed order, or
/// the first failure in seed order.
#[allow(clippy::too_many_arguments)]
pub fn run_seeds(
    scenario: &Scenario,
    seeds: RangeInclusive<u64>,
    cmd: &[String],
    jobs: usize,
    dir: &Path,
    servers: Servers,
    stop_early: bool,
    each: impl Fn(&Result<LabRun, LabFailure>, &Path) -> Result<(), LabFailure> + Sync,
) -> Result<Swept, LabFailure> {
    let list: Vec<u64> = seeds.collect();
    let done = |results: &[Result<RunRow, LabFailure>]| match results.last() {
        Some(Err(_)) => true,
        _ if !stop_early => false,
        _ => {
            let rows: Vec<RunRow> = results.iter().flatten().cloned().collect();
            settled(&rows).is_some()
        }
    };
    let prefix = map_prefix(
        list.len(),
        jobs.max(1),
        |i| {
            let out = seed_dir(dir, list[i]);
            let r = run_lab(scenario, list[i], cmd, out.join("clients"), servers);
            each(&r, &out)?;
            Ok(RunRow::from_lab_run(&r?.run))
        },
        done,
    );
    let rows = prefix.kept.into_iter().collect::<Result<Vec<_>, _>>()?;
    let (n, stop) = match stop_early {
        true => stop_point(&rows),
        false => (rows.len(), Stop::Budget),
    };
    assert_eq!(n, rows.len(), "the lab sweep stopped past its stop point");
    Ok(Swept {
        rows,
        stop,
        dropped: prefix.dropped.iter().map(|&i| list[i]).collect(),
    })
}

/// Where seed `seed`'s run goes in a lab sweep's directory.
pub(crate) fn seed_dir(dir: &Path, seed: u64) -> PathBuf {
    dir.join(format!("seed-{seed}"))
}

//! A lab sweep: every seed a lab run of its own ([`crate::runner::lab`]),
//! `jobs` at once, each with its own ports. Each run is handed to the
//! caller as it ends (the command layer writes its report at once: the lab
//! cannot replay a run), then made a row.

use super::pool::map_in_order;
use super::rows::RunRow;
use crate::runner::lab::{run_lab, LabFailure, LabRun, Servers};
use crate::scenario::Scenario;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

/// Runs every seed of `seeds`, each seed's client logs in
/// `dir/seed-<N>/clients/`, handing each run as it ends (or why it could
/// not be made) to `each`, with its directory; the rows in seed order, or
/// the first failure in seed order.
pub fn run_seeds(
    scenario: &Scenario,
    seeds: RangeInclusive<u64>,
    cmd: &[String],
    jobs: usize,
    dir: &Path,
    servers: Servers,
    each: impl Fn(&Result<LabRun, LabFailure>, &Path) -> Result<(), LabFailure> + Sync,
) -> Result<Vec<RunRow>, LabFailure> {
    let list: Vec<u64> = seeds.collect();
    let results = map_in_order(
        list.len(),
        jobs.max(1),
        |i| {
            let out = seed_dir(dir, list[i]);
            let r = run_lab(scenario, list[i], cmd, out.join("clients"), servers);
            each(&r, &out)?;
            Ok(RunRow::from_lab_run(&r?.run))
        },
        |r: &Result<RunRow, LabFailure>| r.is_err(),
    );
    results.into_iter().flatten().collect()
}

/// Where seed `seed`'s run goes in a lab sweep's directory.
pub(crate) fn seed_dir(dir: &Path, seed: u64) -> PathBuf {
    dir.join(format!("seed-{seed}"))
}

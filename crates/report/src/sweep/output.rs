//! What the report of a sweep is made from ([`SweepOutput`]), and what
//! every part of the report derives from it alone.

use crate::doc::shell_word;
use redlock_harness::scenario::Scenario;
use redlock_harness::sweep::baseline::Caught;
use redlock_harness::sweep::stats::SummaryRow;
use redlock_harness::sweep::tally::{Coverage, Replay};
use std::ops::RangeInclusive;

/// Everything the report of a sweep is made from.
pub struct SweepOutput<'a> {
    /// The scenario swept (without overrides).
    pub scenario: &'a Scenario,
    /// The varied keys, in `[sweep.vary]` order (`cluster.restart`).
    pub keys: &'a [String],
    /// One row per combination, in sweep order (the first key changes
    /// slowest); values as written (`0.5ttl`, `immediate`, `3`).
    pub rows: &'a [SummaryRow],
    /// The seeds each combination ran.
    pub seeds: RangeInclusive<u64>,
    /// Runs in all.
    pub total_runs: u64,
    /// The scenario file as the user named it, for replay commands.
    pub file: &'a str,
    /// Per combination with violations (values as in `rows`), the first
    /// violating seeds, to replay with `redlock-sim run --seed --set`, each
    /// with its run report's `index.html`, relative to the sweep's directory
    /// (`runs/seed-3--cluster.restart=0.95ttl/index.html`), where it is
    /// (a lab matrix's `--keep-runs first` keeps one a cell).
    pub replay: &'a [Replay],
    /// When `clients.variant` is varied with `spec` among its values: each
    /// other variant against the spec client, seed by seed.
    pub caught: &'a [Caught],
    /// When the report holds only part of the sweep (a shard, or a merge
    /// lacking runs): how much; `None` when it holds every run.
    pub coverage: Option<&'a Coverage>,
    /// A lab sweep (`redlock-sim lab --seeds`): the client command. Its
    /// runs are under `seed-<N>/` and cannot be replayed, only run again.
    pub lab: Option<&'a [String]>,
    /// The inconclusive runs, in run order: values (as in `rows`), seed,
    /// and why ([`redlock_harness::sweep::inconclusive_runs`]).
    pub inconclusive: &'a [Inconclusive],
}

/// An inconclusive run: its combination's values, its seed, its causes.
pub type Inconclusive = (Vec<String>, u64, String);

/// Rows of the summary table in the report (summary.csv has them all).
pub(crate) const MAX_TABLE_ROWS: usize = 1000;

/// The command that replays the run of the combination `values` at `seed`
/// (a lab run: that runs the seed again).
pub(crate) fn run_command(out: &SweepOutput, values: &[String], seed: u64) -> String {
    if let Some(cmd) = out.lab {
        let cmd: Vec<String> = cmd.iter().map(|w| shell_word(w)).collect();
        return format!(
            "redlock-sim lab {} --seed {seed} -- {}",
            shell_word(out.file),
            cmd.join(" ")
        );
    }
    let sets: String = out
        .keys
        .iter()
        .zip(values)
        .map(|(k, v)| format!(" --set {k}={}", shell_word(v)))
        .collect();
    format!(
        "redlock-sim run {} --seed {seed}{sets}",
        shell_word(out.file)
    )
}

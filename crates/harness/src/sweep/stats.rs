//! The per-combination summary of a sweep (`summary.csv`): runs, the
//! violation rate with its 95% Wilson interval, acquisition figures, and the
//! mean time clients waited while nobody held the lock with its 95%
//! Student-t interval (the intervals are [`crate::stats`]'s), and (an
//! addition) for each way a stale write got late, the rate of runs with at
//! least one such write and its Wilson interval, and `inconclusive_runs`:
//! runs that did not test what the scenario sets out to test. Every rate,
//! interval and figure is over the *conclusive* runs (`runs` less
//! `inconclusive_runs`); with none, there is no rate: NaN here, empty in
//! `summary.csv`. The figures of lock calls (acquire rate and latencies,
//! time unavailable) of a lab sweep, which sees none, are not measured:
//! NaN, empty.

use super::rows::RunRow;
use crate::check::Verdict;
use crate::stats::{mean_interval, percentile, wilson, Z95};

/// One row of `summary.csv`: a combination of the varied values.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// The varied values, as written in `[sweep.vary]`, in key order.
    pub values: Vec<String>,
    /// Every run, conclusive or not.
    pub runs: u64,
    /// Runs that did not test what the scenario sets out to test: the
    /// rates below leave them out.
    pub inconclusive_runs: u64,
    pub violating_runs: u64,
    pub violation_rate: f64,
    /// 95% Wilson interval of the violation rate.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Acquisitions per lock call, over all runs of the combination. This
    /// and the figures down to `unavailable_ci_ms` are NaN (`None`) when no
    /// run saw its lock calls ([`SummaryRow::lock_calls_seen`]).
    pub acquire_rate: f64,
    /// Median over runs of each run's median acquisition latency.
    pub acquire_p50_ms: f64,
    /// 99th percentile (nearest rank) over runs of each run's p99 latency.
    pub acquire_p99_ms: f64,
    /// Mean over runs of `unavailable_ms`: the time clients waited while
    /// nobody held the lock (the availability a safety measure costs).
    pub unavailable_mean_ms: f64,
    /// Its 95% interval, [`mean_interval`] (`None` with fewer than 2 runs).
    pub unavailable_ci_ms: Option<(f64, f64)>,
    /// Runs with a stale write in flight, sent late, in overlap
    /// ([`crate::check::StaleKind::ALL`]'s order).
    pub stale_kinds: [KindRate; 3],
}

/// How many runs had at least one stale write of a kind, their share and
/// its 95% Wilson interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KindRate {
    pub runs: u64,
    pub(crate) rate: f64,
    pub(crate) ci_low: f64,
    pub(crate) ci_high: f64,
}

impl KindRate {
    /// No rate: no conclusive run.
    pub fn none() -> KindRate {
        KindRate {
            runs: 0,
            rate: f64::NAN,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
        }
    }

    /// `with` runs of `runs`.
    pub fn of(with: u64, runs: u64) -> KindRate {
        let (ci_low, ci_high) = wilson(with, runs, Z95);
        let rate = if runs == 0 {
            0.0
        } else {
            with as f64 / runs as f64
        };
        KindRate {
            runs: with,
            rate,
            ci_low,
            ci_high,
        }
    }
}

/// The columns of `summary.csv` after the varied keys, in order.
pub const SUMMARY_COLUMNS: [&str; 21] = [
    "runs",
    "violating_runs",
    "violation_rate",
    "ci_low",
    "ci_high",
    "acquire_rate",
    "acquire_p50_ms",
    "acquire_p99_ms",
    "unavailable_mean_ms",
    "unavailable_ci_low_ms",
    "unavailable_ci_high_ms",
    "stale_in_flight_rate",
    "stale_in_flight_ci_low",
    "stale_in_flight_ci_high",
    "stale_sent_late_rate",
    "stale_sent_late_ci_low",
    "stale_sent_late_ci_high",
    "stale_in_overlap_rate",
    "stale_in_overlap_ci_low",
    "stale_in_overlap_ci_high",
    "inconclusive_runs",
];

impl SummaryRow {
    /// Whether its runs saw their lock calls (a lab sweep's did not).
    pub fn lock_calls_seen(&self) -> bool {
        !self.acquire_rate.is_nan()
    }

    /// The runs its rates are of: the conclusive ones.
    pub fn conclusive_runs(&self) -> u64 {
        self.runs - self.inconclusive_runs
    }

    /// The row's fields under [`SUMMARY_COLUMNS`], as `summary.csv` holds
    /// them (rates with 6 decimals, times in ms with 3; no interval of the
    /// waiting from a single run: both fields empty).
    pub fn fields(&self) -> Vec<String> {
        let mut f = vec![
            self.runs.to_string(),
            self.violating_runs.to_string(),
            measured(self.violation_rate, 6),
            measured(self.ci_low, 6),
            measured(self.ci_high, 6),
            measured(self.acquire_rate, 6),
            measured(self.acquire_p50_ms, 3),
            measured(self.acquire_p99_ms, 3),
            measured(self.unavailable_mean_ms, 3),
        ];
        match self.unavailable_ci_ms {
            Some((lo, hi)) => f.extend([format!("{lo:.3}"), format!("{hi:.3}")]),
            None => f.extend([String::new(), String::new()]),
        }
        for k in &self.stale_kinds {
            f.extend([k.rate, k.ci_low, k.ci_high].map(|v| measured(v, 6)));
        }
        f.push(self.inconclusive_runs.to_string());
        assert_eq!(f.len(), SUMMARY_COLUMNS.len(), "a summary row's fields");
        f
    }
}

/// `v` with `decimals`; empty when not measured (NaN).
fn measured(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        String::new()
    } else {
        format!("{v:.decimals$}")
    }
}

/// Summarises the runs of one combination (all `rows` share `values`):
/// every figure over its conclusive runs.
pub fn summarize(values: Vec<String>, rows: &[&RunRow]) -> SummaryRow {
    let conclusive: Vec<&RunRow> = rows.iter().copied().filter(|r| r.conclusive()).collect();
    let mut row = summarize_all(values, &conclusive);
    row.runs = rows.len() as u64;
    row.inconclusive_runs = (rows.len() - conclusive.len()) as u64;
    // A row's verdict is one of the three (`RunRow::parse` drops others).
    let safe = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Safe.as_str())
        .count() as u64;
    assert_eq!(
        row.violating_runs + safe + row.inconclusive_runs,
        row.runs,
        "{:?}: violating {} + safe {safe} + inconclusive {} runs are not all {} runs",
        row.values,
        row.violating_runs,
        row.inconclusive_runs,
        row.runs
    );
    if conclusive.is_empty() {
        return SummaryRow {
            violation_rate: f64::NAN,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
            acquire_rate: f64::NAN,
            acquire_p50_ms: f64::NAN,
            acquire_p99_ms: f64::NAN,
            unavailable_mean_ms: f64::NAN,
            unavailable_ci_ms: None,
            stale_kinds: [KindRate::none(); 3],
            ..row
        };
    }
    let rows = &conclusive;
    if rows.iter().any(|r| r.lock_calls_seen) {
        return row;
    }
    SummaryRow {
        acquire_rate: f64::NAN,
        acquire_p50_ms: f64::NAN,
        acquire_p99_ms: f64::NAN,
        unavailable_mean_ms: f64::NAN,
        unavailable_ci_ms: None,
        ..row
    }
}

/// [`summarize`], every figure computed.
fn summarize_all(values: Vec<String>, rows: &[&RunRow]) -> SummaryRow {
    let runs = rows.len() as u64;
    let violating_runs = rows.iter().filter(|r| r.verdict == "violation").count() as u64;
    let (ci_low, ci_high) = wilson(violating_runs, runs, Z95);
    let attempts: u64 = rows.iter().map(|r| r.attempts).sum();
    let acquisitions: u64 = rows.iter().map(|r| r.acquisitions).sum();
    let sorted = |f: fn(&RunRow) -> f64| {
        let mut v: Vec<f64> = rows
            .iter()
            .filter(|r| r.acquisitions > 0)
            .map(|r| f(r))
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let waited: Vec<f64> = rows.iter().map(|r| r.unavailable_ms).collect();
    let (unavailable_mean_ms, unavailable_ci_ms) = mean_interval(&waited);
    let stale_kinds = [0, 1, 2].map(|k| {
        let with = rows.iter().filter(|r| r.stale_split[k] > 0).count() as u64;
        KindRate::of(with, runs)
    });
    SummaryRow {
        values,
        runs,
        inconclusive_runs: 0,
        violating_runs,
        violation_rate: if runs == 0 {
            0.0
        } else {
            violating_runs as f64 / runs as f64
        },
        ci_low,
        ci_high,
        acquire_rate: if attempts == 0 {
            0.0
        } else {
            acquisitions as f64 / attempts as f64
        },
        acquire_p50_ms: percentile(&sorted(|r| r.acquire_p50_ms), 0.5),
        acquire_p99_ms: percentile(&sorted(|r| r.acquire_p99_ms), 0.99),
        unavailable_mean_ms,
        unavailable_ci_ms,
        stale_kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seen: bool) -> RunRow {
        RunRow {
            scenario: "s".into(),
            seed: 1,
            values: Vec::new(),
            verdict: "safe".into(),
            lock_overlaps: 0,
            write_interleavings: 0,
            stale_writes: 0,
            rejected_writes: 0,
            attempts: 4,
            acquisitions: 2,
            acquire_p50_ms: 3.0,
            acquire_p99_ms: 5.0,
            unavailable_ms: 10.0,
            lock_calls_seen: seen,
            trace: "t".into(),
            wall_ms: 1.0,
            stale_split: [0; 3],
            inconclusive: String::new(),
        }
    }

    #[test]
    fn a_lab_sweeps_figures_of_lock_calls_are_empty() {
        let (a, b) = (row(false), row(false));
        let s = summarize(Vec::new(), &[&a, &b]);
        assert!(!s.lock_calls_seen());
        let f = s.fields();
        let at = |name: &str| SUMMARY_COLUMNS.iter().position(|c| *c == name).unwrap();
        for name in &SUMMARY_COLUMNS[5..11] {
            assert_eq!(f[at(name)], "", "{name}");
        }
        assert_eq!(f[at("runs")], "2");
        let (a, b) = (row(true), row(true));
        let s = summarize(Vec::new(), &[&a, &b]);
        assert!(s.lock_calls_seen());
        assert_eq!(s.fields()[at("acquire_rate")], "0.500000");
        assert_eq!(s.fields()[at("acquire_p50_ms")], "3.000");
    }
}

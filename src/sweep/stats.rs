//! The per-combination summary of a sweep, and the 95% Wilson score
//! interval of a violation rate.

use super::rows::RunRow;

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `k` successes in `n` trials, at `z`.
/// `(0, 0)` for no trials; always within [0, 1].
pub fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// One row of `summary.csv`: a combination of the varied values.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// The varied values, as written in `[sweep.vary]`, in key order.
    pub values: Vec<String>,
    pub runs: u64,
    pub violating_runs: u64,
    pub violation_rate: f64,
    /// 95% Wilson interval of the violation rate.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Acquisitions per lock call, over all runs of the combination.
    pub acquire_rate: f64,
    /// Median over runs of each run's median acquisition latency.
    pub acquire_p50_ms: f64,
    /// 99th percentile (nearest rank) over runs of each run's p99 latency.
    pub acquire_p99_ms: f64,
}

/// Nearest-rank percentile of a sorted slice (0 when empty).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Summarises the runs of one combination (all `rows` share `values`).
pub fn summarize(values: Vec<String>, rows: &[&RunRow]) -> SummaryRow {
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
    SummaryRow {
        values,
        runs,
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5
    }

    #[test]
    fn wilson_against_known_values() {
        // Reference values from the closed form, as statsmodels'
        // proportion_confint(method="wilson") and R's prop.test(correct=FALSE) give them.
        assert!(
            close(wilson(0, 10, Z95), (0.0, 0.27753)),
            "{:?}",
            wilson(0, 10, Z95)
        );
        assert!(
            close(wilson(5, 10, Z95), (0.23659, 0.76341)),
            "{:?}",
            wilson(5, 10, Z95)
        );
        assert!(
            close(wilson(1, 100, Z95), (0.00177, 0.05448)),
            "{:?}",
            wilson(1, 100, Z95)
        );
        assert!(
            close(wilson(10, 10, Z95), (0.72247, 1.0)),
            "{:?}",
            wilson(10, 10, Z95)
        );
        assert!(
            close(wilson(0, 2000, Z95), (0.0, 0.00192)),
            "{:?}",
            wilson(0, 2000, Z95)
        );
        assert_eq!(wilson(0, 0, Z95), (0.0, 0.0));
    }

    #[test]
    fn nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.0);
        assert_eq!(percentile(&v, 0.99), 4.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}

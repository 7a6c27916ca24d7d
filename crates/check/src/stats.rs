//! Statistics shared by the checker's figures, sweeps, frontiers and
//! reports: the 95% Wilson score interval of a rate, the 95% Student-t
//! interval of a mean, nearest-rank percentiles. Plain functions on
//! numbers; nothing here knows what a run is.

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `k` successes in `n` trials, at `z`.
/// `(0, 0)` for no trials; always within [0, 1].
pub fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    assert!(k <= n, "wilson: {k} successes in {n} trials");
    assert!(z.is_finite() && z > 0.0, "wilson: z = {z}");
    if n == 0 {
        return (0.0, 0.0);
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    let (low, high) = ((centre - half).max(0.0), (centre + half).min(1.0));
    // Ordered, within [0, 1], and holding the observed rate (to rounding:
    // at k = 0 the low end is 0 only up to an ulp).
    assert!(
        0.0 <= low && low <= high && high <= 1.0,
        "wilson({k}, {n}): [{low}, {high}]"
    );
    assert!(
        low <= p + 1e-12 && p <= high + 1e-12,
        "wilson({k}, {n}): the rate {p} outside [{low}, {high}]"
    );
    (low, high)
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom:
/// exact to 6 digits up to 30, then the Cornish-Fisher expansion around the
/// normal quantile (error below 1e-5 from 31 on).
pub(crate) fn t95(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
        2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
        2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
        2.048407, 2.045230, 2.042272,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let (z, n) = (Z95, df as f64);
            let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
            z + (z3 + z) / (4.0 * n)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
                + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
        }
    }
}

/// The mean of `xs` and its 95% interval, mean ± t(n−1) × s/√n with `s`
/// the sample standard deviation; the low end is clamped at 0, since a
/// waiting time cannot be negative. The interval is `None` for fewer than
/// two values (no spread to estimate); the mean is 0 for none.
pub fn mean_interval(xs: &[f64]) -> (f64, Option<(f64, f64)>) {
    let n = xs.len();
    if n == 0 {
        return (0.0, None);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, None);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n as u64 - 1) * (var / n as f64).sqrt();
    (mean, Some(((mean - half).max(0.0), mean + half)))
}

/// The median of `sorted` (ascending): its middle value, or the mean of
/// its two middle values; 0 for none.
pub fn median(sorted: &[f64]) -> f64 {
    assert!(
        sorted.windows(2).all(|w| w[0] <= w[1]),
        "median: the values are not sorted"
    );
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Nearest-rank percentile of a sorted slice (0 when empty).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!((0.0..=1.0).contains(&p), "percentile {p} outside [0, 1]");
    // Both callers sort with `f64::total_cmp` just before: O(n), once.
    assert!(
        sorted.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le()),
        "percentile of an unsorted slice"
    );
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
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
    fn t_quantiles() {
        // Reference values: R's qt(0.975, df), scipy.stats.t.ppf(0.975, df).
        for (df, want) in [
            (1, 12.706205),
            (9, 2.262157),
            (30, 2.042272),
            (31, 2.039513),
            (40, 2.021075),
            (60, 2.000298),
            (99, 1.984217),
            (199, 1.971957),
            (1000, 1.962339),
        ] {
            assert!(
                (t95(df) - want).abs() < 1e-5,
                "df {df}: {} vs {want}",
                t95(df)
            );
        }
    }

    #[test]
    fn mean_intervals() {
        assert_eq!(mean_interval(&[]), (0.0, None));
        assert_eq!(mean_interval(&[5.0]), (5.0, None));
        assert_eq!(mean_interval(&[3.0, 3.0, 3.0]), (3.0, Some((3.0, 3.0))));
        // 1..=10: mean 5.5, s = 3.02765, t(9) = 2.262157: ± 2.165850.
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let (m, ci) = mean_interval(&xs);
        let (lo, hi) = ci.unwrap();
        assert!((m - 5.5).abs() < 1e-12);
        assert!(
            (lo - 3.334150).abs() < 1e-5 && (hi - 7.665850).abs() < 1e-5,
            "{lo} {hi}"
        );
        // Clamped at zero: mostly zeros and one long wait.
        let (_, ci) = mean_interval(&[0.0, 0.0, 0.0, 900.0]);
        assert_eq!(ci.unwrap().0, 0.0);
    }

    #[test]
    fn nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.0);
        assert_eq!(percentile(&v, 0.99), 4.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}

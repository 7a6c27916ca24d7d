//! The validity a lock call computes (ttl − elapsed − drift), the majority,
//! and the arithmetic of the client flaws that compute validity otherwise.

#[allow(unused_imports)]
use super::flaw::Variant;
use std::time::Duration;

/// The drift allowance: ttl × drift_factor + 2ms.
pub(crate) fn drift(ttl: Duration, drift_factor: f64) -> Duration {
    Duration::from_nanos((ttl.as_nanos() as f64 * drift_factor.max(0.0)) as u64)
        + Duration::from_millis(2)
}

/// Validity left after acquiring in `elapsed`: ttl − elapsed − drift, in
/// signed arithmetic; `None` when that is zero or less (never a lock whose
/// validity is ≤ 0, never an underflow).
pub(crate) fn validity(ttl: Duration, elapsed: Duration, drift_factor: f64) -> Option<Duration> {
    let v = ttl.as_nanos() as i128
        - elapsed.as_nanos() as i128
        - drift(ttl, drift_factor).as_nanos() as i128;
    let left = (v > 0).then(|| Duration::from_nanos(v as u64));
    // The spec's rule: never longer than the TTL less the time spent.
    assert!(
        left.is_none_or(|l| l + elapsed < ttl),
        "validity {left:?} after {elapsed:?} of a {ttl:?} lock"
    );
    left
}

/// [`Variant::NoDriftAllowance`]: ttl − elapsed, without the drift term (as
/// redsync computes it, and early redlock-py did); `None` when ≤ 0.
pub(crate) fn validity_without_drift(ttl: Duration, elapsed: Duration) -> Option<Duration> {
    let v = ttl.as_nanos() as i128 - elapsed.as_nanos() as i128;
    (v > 0).then(|| Duration::from_nanos(u64::try_from(v).unwrap_or(u64::MAX)))
}

/// [`Variant::UnsignedValidity`]: badboy/redlock-rs's arithmetic, ttl − drift −
/// elapsed in unsigned milliseconds with wrapping subtraction (what its
/// `usize` arithmetic does in a release build). When elapsed + drift exceeds
/// the TTL the result wraps to nearly 2^64 ms: "valid" for ages.
pub(crate) fn validity_unsigned(
    ttl: Duration,
    elapsed: Duration,
    drift_factor: f64,
) -> Option<Duration> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    let drift_ms = u64::try_from(drift(ttl, drift_factor).as_millis()).unwrap_or(u64::MAX);
    let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let v = ttl_ms.wrapping_sub(drift_ms).wrapping_sub(elapsed_ms);
    (v > 0).then(|| Duration::from_millis(v))
}

/// [`Variant::WallClockElapsed`]: validity when elapsed is the difference of two
/// wall-clock readings in ms (redlock-py's `time.time()`), in signed
/// arithmetic: a negative elapsed (the clock stepped back during the call)
/// gives a validity longer than the TTL. `None` when ≤ 0.
pub(crate) fn validity_wall(
    ttl: Duration,
    wall_elapsed_ms: i64,
    drift_factor: f64,
) -> Option<Duration> {
    let v = ttl.as_nanos() as i128
        - wall_elapsed_ms as i128 * 1_000_000
        - drift(ttl, drift_factor).as_nanos() as i128;
    (v > 0).then(|| Duration::from_nanos(u64::try_from(v).unwrap_or(u64::MAX)))
}

/// Majority of `n`.
pub(crate) fn quorum(n: usize) -> usize {
    n / 2 + 1
}
#[cfg(test)]
mod tests {
    use super::super::redlock::Config;
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn validity_at_its_edges() {
        // 10s TTL: drift = 100ms + 2ms.
        assert_eq!(
            validity(10_000 * MS, Duration::ZERO, 0.01),
            Some(9_898 * MS)
        );
        assert_eq!(validity(10_000 * MS, 9_897 * MS, 0.01), Some(MS));
        assert_eq!(validity(10_000 * MS, 9_898 * MS, 0.01), None);
        assert_eq!(validity(10_000 * MS, 20_000 * MS, 0.01), None);
        // Tiny TTLs: the 2ms term alone eats them.
        assert_eq!(validity(2 * MS, Duration::ZERO, 0.01), None);
        assert_eq!(validity(MS, Duration::ZERO, 0.0), None);
        assert_eq!(validity(3 * MS, Duration::ZERO, 0.0), Some(MS));
        // Elapsed far beyond anything: no underflow, no panic.
        assert_eq!(validity(Duration::ZERO, Duration::MAX, 1.0), None);
        assert!(validity(Duration::from_secs(u64::MAX / 4), Duration::ZERO, 0.0).is_some());
    }

    #[test]
    fn majority() {
        assert_eq!([1, 2, 3, 4, 5].map(quorum), [1, 2, 2, 3, 3]);
    }

    #[test]
    fn flaw_unsigned_validity_wraps() {
        // 10s TTL, drift 102ms: the same as the correct validity while
        // elapsed + drift < ttl ...
        assert_eq!(
            validity_unsigned(10_000 * MS, Duration::ZERO, 0.01),
            Some(9_898 * MS)
        );
        assert_eq!(validity_unsigned(10_000 * MS, 9_897 * MS, 0.01), Some(MS));
        assert_eq!(validity_unsigned(10_000 * MS, 9_898 * MS, 0.01), None);
        // ... and 2^64 − 1ms when it is 1ms over: "valid" for 584 million years.
        assert_eq!(
            validity_unsigned(10_000 * MS, 9_899 * MS, 0.01),
            Some(Duration::from_millis(u64::MAX))
        );
        assert_eq!(validity(10_000 * MS, 9_899 * MS, 0.01), None);
        assert_eq!(
            validity_unsigned(1_000 * MS, 2_400 * MS, 0.01),
            Some(Duration::from_millis(
                1_000u64.wrapping_sub(12).wrapping_sub(2_400)
            ))
        );
        // A TTL below the 2ms drift term wraps even with no time elapsed.
        assert!(validity_unsigned(MS, Duration::ZERO, 0.0).unwrap() > Duration::from_secs(1 << 40));
    }

    #[test]
    fn flaw_no_drift_allowance() {
        assert_eq!(
            validity_without_drift(10_000 * MS, 4 * MS),
            Some(9_996 * MS)
        );
        assert_eq!(validity(10_000 * MS, 4 * MS, 0.01), Some(9_894 * MS));
        assert_eq!(validity_without_drift(10_000 * MS, 9_999 * MS), Some(MS));
        assert_eq!(validity_without_drift(10_000 * MS, 10_000 * MS), None);
        assert_eq!(validity_without_drift(MS, Duration::MAX), None);
    }

    #[test]
    fn flaw_wall_clock_elapsed() {
        // A forward elapsed is the correct validity ...
        assert_eq!(
            validity_wall(10_000 * MS, 100, 0.01),
            validity(10_000 * MS, 100 * MS, 0.01)
        );
        // ... a backward step makes it longer than the TTL ...
        assert_eq!(
            validity_wall(2_000 * MS, 3 - 10_000, 0.01),
            Some(11_975 * MS)
        );
        // ... and a forward jump exhausts it.
        assert_eq!(validity_wall(2_000 * MS, 5_000, 0.01), None);
        assert_eq!(
            validity_wall(MS, i64::MIN, 1.0),
            Some(Duration::from_nanos(u64::MAX))
        );
    }

    #[test]
    fn flawless_config_is_the_default() {
        assert_eq!(Config::default().variant, Variant::Spec);
    }
}

//! From a checked run to its outcome, and whether that is what the
//! scenario expects: the verdict rules every command, sweep and report
//! applies (`safe`, `violation`, `degraded`; exit codes 0 and 1 of `run`).

use super::{CheckResult, Liveness, Verdict};
use crate::scenario::{Expect, Scenario};

/// A safe run is *degraded* when either
///
/// - **unavailable**: `unavailable_ms` ≥ [`DEGRADED_UNAVAILABLE`] × the
///   scenario's `duration` (for at least half of the run some client was
///   inside a lock call while nobody held the lock), or
/// - **slow**: `acquire_p50_ms` ≥ [`DEGRADED_ACQUIRE`] × the largest client
///   `ttl` (the median successful lock call took at least a quarter of the
///   TTL, so at most three quarters of it is left as validity).
///
/// Both figures are the checker's ([`Liveness`]) for this one run, so the
/// rule needs nothing but the run. A run with a violation is never
/// degraded: it is a violation.
///
/// The thresholds leave a wide margin between the flawed and the correct
/// client in `scenarios/variants/` (`no-release-on-failure`: unavailable
/// for most of the run against about a tenth; `sequential`: a median
/// acquisition of half the TTL against a tenth), and keep the correct client
/// in every shipped scenario, random partitions included, below both.
pub(crate) const DEGRADED_UNAVAILABLE: f64 = 0.5;

/// See [`DEGRADED_UNAVAILABLE`].
pub(crate) const DEGRADED_ACQUIRE: f64 = 0.25;

/// Is `liveness` degraded for `scenario` (the liveness half of the rule of
/// [`DEGRADED_UNAVAILABLE`]; safety is not looked at)?
pub(crate) fn is_degraded(scenario: &Scenario, liveness: &Liveness) -> bool {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    liveness.unavailable_ms >= DEGRADED_UNAVAILABLE * ms(scenario.duration)
        || liveness.acquire_p50_ms >= DEGRADED_ACQUIRE * ms(scenario.max_ttl)
}

/// The outcome of a run: `"violation"` when the verdict is a violation,
/// else `"degraded"` when the run is degraded (see [`DEGRADED_UNAVAILABLE`]),
/// else `"safe"`. The same whatever the scenario expects.
pub fn outcome_of(scenario: &Scenario, check: &CheckResult) -> &'static str {
    match check.verdict {
        Verdict::Violation => "violation",
        Verdict::Safe if is_degraded(scenario, &check.liveness) => "degraded",
        Verdict::Safe => "safe",
    }
}

/// Whether a run shows what its scenario's `expect` asks for:
/// - `safe`: no violation (a degraded run is still safe);
/// - `violation`: at least one violation;
/// - `degraded`: no violation, and degraded by the rule of
///   [`DEGRADED_UNAVAILABLE`] (unavailable ≥ 50% of `duration`, or median
///   acquisition ≥ 25% of the TTL).
///
/// This is the one definition: `Run::as_expected` and
/// `RunOutput::as_expected` (`summary.json`, the report) both call it.
pub fn as_expected_of(scenario: &Scenario, check: &CheckResult) -> bool {
    match scenario.expect {
        Expect::Safe => check.verdict == Verdict::Safe,
        Expect::Violation => check.verdict == Verdict::Violation,
        Expect::Degraded => outcome_of(scenario, check) == "degraded",
    }
}

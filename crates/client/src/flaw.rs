//! Deliberate flaws: the ways popular Redis lock clients have deviated from
//! the algorithm, as configurations of this client.
//!
//! Each [`Variant`] but [`Variant::Spec`] is one small, clearly named branch
//! inside the real client code ([`super::redlock`], [`super::watchdog`],
//! [`super::scripts`]); with `Config::variant == Variant::Spec` (the default)
//! none of them is taken and the client is the algorithm of the Redis
//! distributed-locks page. They exist so that
//! the simulation can show what each flaw costs users of the client that has
//! it (`clients.variant` in a scenario file); do not use them otherwise.

use std::fmt;

/// Client algorithm variant (a scenario's `clients.variant`): the correct
/// algorithm ([`Variant::Spec`]) or one deliberate deviation from it, one of
/// the known mistakes, to show what each costs. The names are the scenario
/// format's `variant` values; the order (`Spec` first) is the reports'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// The algorithm as specified: no flaw.
    Spec,
    /// Skips the validity check after acquiring.
    ///
    /// Accepts a quorum without checking that validity is still positive:
    /// when acquiring took longer than ttl − drift, the lock call still
    /// returns success, with a validity of zero (the lock's end, start + ttl
    /// − drift, is already in the past). node-redlock (issue 296,
    /// "Expiration time is in the past").
    NoValidityCheck,
    /// Extends with a plain SET that recreates an expired key.
    ///
    /// Extension re-creates a key that has expired: the extension script
    /// `SET`s the key with our token when it is missing (RedLock.net's extend
    /// script; redlock-rb's default; redsync's `WithSetNXOnExtend`), and the
    /// extension is attempted whether or not the lock's validity has already
    /// run out (redsync's `Extend` checks neither), so the watchdog keeps
    /// trying after the validity is over instead of declaring the lock lost.
    ExtendResurrects,
    /// Measures elapsed time with the wall clock.
    ///
    /// Measures the time acquiring took with the wall clock (which can jump)
    /// instead of a monotonic clock, in signed arithmetic: a backward step
    /// during the call makes elapsed negative and validity longer than the
    /// TTL. redlock-py (`time.time()`).
    WallClockElapsed,
    /// Leaves out the drift allowance from validity.
    ///
    /// Validity without the drift term: ttl − elapsed. redsync (no +2ms),
    /// early redlock-py (drift added instead of subtracted).
    NoDriftAllowance,
    /// Treats a negative validity as a huge positive one.
    ///
    /// Validity computed in unsigned milliseconds (ttl − drift − elapsed with
    /// wrapping subtraction): when acquiring took longer than the TTL it wraps
    /// to a huge value and the client believes it holds the lock for ages.
    /// badboy/redlock-rs (issue 20).
    UnsignedValidity,
    /// Releases with a plain DEL, not compare-and-delete.
    ///
    /// Releases with a plain `DEL` instead of compare-and-delete, deleting
    /// whoever's key is there: the naive pattern the Redis docs warn against.
    PlainDelRelease,
    /// Does not release the nodes it did lock when acquisition fails.
    ///
    /// Does not release the nodes it did lock after a failed attempt: they
    /// stay locked (by a client that does not hold the lock) while the call
    /// retries, and are released only once the whole call has failed.
    /// node-redlock between retries.
    NoReleaseOnFailure,
    /// Contacts nodes one after another instead of at once.
    ///
    /// Asks the nodes one after another instead of concurrently, so acquiring
    /// (and releasing, and extending) takes the sum of the nodes' round trips
    /// and timeouts instead of the largest. redlock-py, redlock-rb, Redisson's
    /// RedLock.
    Sequential,
    /// The SETNX + GETSET timestamp lock of the `SETNX` page, timed by the
    /// client's wall clock, instead of SET NX PX.
    ///
    /// The `SETNX` + `GETSET` timestamp lock of the Redis `SETNX` page
    /// ("Locking with SETNX"): the value is an expiry timestamp of the
    /// client's wall clock, the key has no TTL on the node, an expired lock
    /// is taken over with `GETSET`, release is `DEL` when the client's clock
    /// says the lock has not expired. A single-instance algorithm: with more
    /// than one node it is run on every node and needs a majority.
    LegacySetnx,
    /// Counts a majority of the nodes that answered, not of all nodes.
    ///
    /// Counts a majority of the nodes that answered (took the key or refused
    /// it), not of all N: an easy misreading of the algorithm (no known
    /// client; included as a control).
    MajorityOfResponders,
}

impl Variant {
    /// Every variant, `Spec` first, in the scenario format's order.
    pub const ALL: [Variant; 11] = [
        Variant::Spec,
        Variant::NoValidityCheck,
        Variant::ExtendResurrects,
        Variant::WallClockElapsed,
        Variant::NoDriftAllowance,
        Variant::UnsignedValidity,
        Variant::PlainDelRelease,
        Variant::NoReleaseOnFailure,
        Variant::Sequential,
        Variant::LegacySetnx,
        Variant::MajorityOfResponders,
    ];

    /// The name used in scenario files (`"no-validity-check"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Spec => "spec",
            Variant::NoValidityCheck => "no-validity-check",
            Variant::ExtendResurrects => "extend-resurrects",
            Variant::WallClockElapsed => "wall-clock-elapsed",
            Variant::NoDriftAllowance => "no-drift-allowance",
            Variant::UnsignedValidity => "unsigned-validity",
            Variant::PlainDelRelease => "plain-del-release",
            Variant::NoReleaseOnFailure => "no-release-on-failure",
            Variant::Sequential => "sequential",
            Variant::LegacySetnx => "legacy-setnx",
            Variant::MajorityOfResponders => "majority-of-responders",
        }
    }

    /// The variant named `name`, if any (`"spec"` is [`Variant::Spec`]).
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.iter().copied().find(|v| v.as_str() == name)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(Variant::from_name(v.as_str()), Some(v));
            assert_eq!(v.to_string(), v.as_str());
        }
        assert_eq!(Variant::from_name("spec"), Some(Variant::Spec));
        assert_eq!(Variant::from_name("no-such-variant"), None);
    }

    /// The names, their order and the ordering the reports sort by are the
    /// scenario format's: `Spec` first, then the flaws as listed.
    #[test]
    fn names_and_order_are_the_scenario_formats() {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.as_str()).collect();
        assert_eq!(
            names,
            [
                "spec",
                "no-validity-check",
                "extend-resurrects",
                "wall-clock-elapsed",
                "no-drift-allowance",
                "unsigned-validity",
                "plain-del-release",
                "no-release-on-failure",
                "sequential",
                "legacy-setnx",
                "majority-of-responders",
            ]
        );
        assert!(Variant::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}

//! Deliberate flaws: the ways popular Redis lock clients have deviated from
//! the algorithm, as configurations of this client.
//!
//! Each [`Flaw`] is one small, clearly named branch inside the real client
//! code ([`super::redlock`], [`super::watchdog`], [`super::scripts`]); with
//! `Config::flaw == None` (the default) none of them is taken and the client
//! is the algorithm of the Redis distributed-locks page. They exist so that
//! the simulation can show what each flaw costs users of the client that has
//! it (`clients.variant` in a scenario file); do not use them otherwise.

use std::fmt;

/// One deliberate deviation from the algorithm. The names are the scenario
/// format's `variant` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flaw {
    /// Accepts a quorum without checking that validity is still positive:
    /// when acquiring took longer than ttl − drift, the lock call still
    /// returns success, with a validity of zero (the lock's end, start + ttl
    /// − drift, is already in the past). node-redlock (issue 296,
    /// "Expiration time is in the past").
    NoValidityCheck,
    /// Extension re-creates a key that has expired: the extension script
    /// `SET`s the key with our token when it is missing (RedLock.net's extend
    /// script; redlock-rb's default; redsync's `WithSetNXOnExtend`), and the
    /// extension is attempted whether or not the lock's validity has already
    /// run out (redsync's `Extend` checks neither), so the watchdog keeps
    /// trying after the validity is over instead of declaring the lock lost.
    ExtendResurrects,
    /// Measures the time acquiring took with the wall clock (which can jump)
    /// instead of a monotonic clock, in signed arithmetic: a backward step
    /// during the call makes elapsed negative and validity longer than the
    /// TTL. redlock-py (`time.time()`).
    WallClockElapsed,
    /// Validity without the drift term: ttl − elapsed. redsync (no +2ms),
    /// early redlock-py (drift added instead of subtracted).
    NoDriftAllowance,
    /// Validity computed in unsigned milliseconds (ttl − drift − elapsed with
    /// wrapping subtraction): when acquiring took longer than the TTL it wraps
    /// to a huge value and the client believes it holds the lock for ages.
    /// badboy/redlock-rs (issue 20).
    UnsignedValidity,
    /// Releases with a plain `DEL` instead of compare-and-delete, deleting
    /// whoever's key is there: the naive pattern the Redis docs warn against.
    PlainDelRelease,
    /// Does not release the nodes it did lock after a failed attempt: they
    /// stay locked (by a client that does not hold the lock) while the call
    /// retries, and are released only once the whole call has failed.
    /// node-redlock between retries.
    NoReleaseOnFailure,
    /// Asks the nodes one after another instead of concurrently, so acquiring
    /// (and releasing, and extending) takes the sum of the nodes' round trips
    /// and timeouts instead of the largest. redlock-py, redlock-rb, Redisson's
    /// RedLock.
    Sequential,
    /// The `SETNX` + `GETSET` timestamp lock of the Redis `SETNX` page
    /// ("Locking with SETNX"): the value is an expiry timestamp of the
    /// client's wall clock, the key has no TTL on the node, an expired lock
    /// is taken over with `GETSET`, release is `DEL` when the client's clock
    /// says the lock has not expired. A single-instance algorithm: with more
    /// than one node it is run on every node and needs a majority.
    LegacySetnx,
    /// Counts a majority of the nodes that answered (took the key or refused
    /// it), not of all N: an easy misreading of the algorithm (no known
    /// client; included as a control).
    MajorityOfResponders,
}

impl Flaw {
    /// Every flaw, in the scenario format's order.
    pub const ALL: [Flaw; 10] = [
        Flaw::NoValidityCheck,
        Flaw::ExtendResurrects,
        Flaw::WallClockElapsed,
        Flaw::NoDriftAllowance,
        Flaw::UnsignedValidity,
        Flaw::PlainDelRelease,
        Flaw::NoReleaseOnFailure,
        Flaw::Sequential,
        Flaw::LegacySetnx,
        Flaw::MajorityOfResponders,
    ];

    /// The name used in scenario files (`"no-validity-check"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Flaw::NoValidityCheck => "no-validity-check",
            Flaw::ExtendResurrects => "extend-resurrects",
            Flaw::WallClockElapsed => "wall-clock-elapsed",
            Flaw::NoDriftAllowance => "no-drift-allowance",
            Flaw::UnsignedValidity => "unsigned-validity",
            Flaw::PlainDelRelease => "plain-del-release",
            Flaw::NoReleaseOnFailure => "no-release-on-failure",
            Flaw::Sequential => "sequential",
            Flaw::LegacySetnx => "legacy-setnx",
            Flaw::MajorityOfResponders => "majority-of-responders",
        }
    }

    /// The flaw named `name`, if any (`"spec"` is no flaw: `None`).
    pub fn from_name(name: &str) -> Option<Flaw> {
        Flaw::ALL.iter().copied().find(|f| f.as_str() == name)
    }

    /// Where the flaw was seen.
    pub fn seen_in(self) -> &'static str {
        match self {
            Flaw::NoValidityCheck => "node-redlock (issue 296)",
            Flaw::ExtendResurrects => {
                "RedLock.net's extend script, redlock-rb's default, redsync's WithSetNXOnExtend"
            }
            Flaw::WallClockElapsed => "redlock-py (time.time())",
            Flaw::NoDriftAllowance => "redsync (no +2ms), early redlock-py",
            Flaw::UnsignedValidity => "badboy/redlock-rs (issue 20)",
            Flaw::PlainDelRelease => "the naive pattern the Redis docs warn against",
            Flaw::NoReleaseOnFailure => "node-redlock between retries",
            Flaw::Sequential => "redlock-py, redlock-rb, Redisson's RedLock",
            Flaw::LegacySetnx => "the Redis SETNX page (\"Locking with SETNX\")",
            Flaw::MajorityOfResponders => "no known client (a control)",
        }
    }
}

impl fmt::Display for Flaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Flaw::ALL {
            assert_eq!(Flaw::from_name(f.as_str()), Some(f));
        }
        assert_eq!(Flaw::from_name("spec"), None);
    }
}

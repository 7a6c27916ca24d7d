//! The checkers, online: [`Checker::feed`] takes a run's events in time
//! order as the run makes them and [`Checker::finish`] gives the verdict;
//! [`check`] does both over a finished [`History`]. The definitions below are
//! the contract behind the columns of `runs.csv` and the fields of
//! `summary.json` ("What is checked" in `scenario-format.md`). Mutual
//! exclusion is per resource (the lock's key): acquisitions of different
//! resources never conflict.
//!
//! - **Hold** ([`Hold`]): an acquisition (an `acquired` event) holds the lock
//!   from the time of that event until the earliest of
//!   - the start of its release (`release_start`),
//!   - the end of its validity: `valid_until` of `acquired`, replaced by the
//!     `valid_until` of the latest `extended` event of the same acquisition;
//!     validity runs on the client's own clock, so a `clock-rate` fault on
//!     the client recorded after that event moves the end to when the
//!     client's clock, at its new rate, reaches the same reading,
//!   - a `lost`, `validity_expired` or `reentry_failed` event of the
//!     acquisition,
//!   - the time of the last event of the history (the hold was still open
//!     when the run ended).
//!
//!   When several of these fall at the same instant the reason reported is
//!   the first in that list. A hold never ends before it starts.
//! - **Lock overlap** ([`Overlap`], `lock_overlaps`): two holds of the same
//!   resource by *different* clients whose intervals share a stretch of time
//!   of positive length. Touching holds (`a.end == b.start`) do not overlap,
//!   and a hold of length zero overlaps nothing. Each unordered pair of
//!   acquisitions counts once, however long they overlap.
//! - **Stale write** ([`StaleWrite`], `stale_writes`): the store records its
//!   applied writes (`write_applied`) in the order it applies them. A write
//!   of acquisition A of resource R, applied at time t, is stale when an
//!   acquisition B of R succeeded after A did and no later than t
//!   (`A.start < B.start <= t`), whoever B's client is, whether or not B had
//!   written yet, and however the write got late. A write applied at the very
//!   instant of a later acquisition is stale: the nodes granted B its lock at
//!   least one network hop before B's client learned it, so at that instant
//!   the lock had already passed to B. The write *landed in* the latest
//!   acquisition of R that had succeeded by t. Each stale write counts once.
//!   Writes the store refused (`write_rejected`, fencing) were never applied:
//!   they are counted in `rejected_writes`, never as stale.
//! - **How a stale write got late** ([`StaleKind`]): by its send time `s`
//!   (`write_sent`), against the first acquisition B of R that succeeded
//!   after A (`superseded_at`, `B.start`) and the end of A's own hold:
//!   `stale_sent_late` when `s >= A.end` (sent after the writer's own hold
//!   had ended, before or after B: a pause between check and send, or a
//!   client that does not check); `stale_in_flight` when `s < A.end` and
//!   `s < B.start` (sent while A's lock stood, applied after B: the network
//!   or the store delayed it); `stale_in_overlap` when
//!   `B.start <= s < A.end` (sent while the writer still held the lock by
//!   its own validity, after another acquisition: the lock itself failed,
//!   so A and B overlap unless B is the writer's own). The three add up to
//!   `stale_writes`. A write the history shows no `write_sent` for (a
//!   hand-written history) is taken as sent when it was applied.
//! - **Write interleaving** ([`Interleaving`], `write_interleavings`): two
//!   acquisitions of the same resource by *different* clients whose applied
//!   writes come in the order A, B, A (B wrote between two writes of A).
//!   Each unordered pair counts once. Every interleaving also has a stale
//!   write (the second A write, or B's if B acquired first).
//! - **Verdict**: `violation` when `lock_overlaps + stale_writes +
//!   write_interleavings > 0`, else `safe`.
//! - **Liveness** ([`Liveness`]): see the fields; unavailability is per
//!   resource, summed.
//!
//! The checker keeps what grows with the number of acquisitions and lock
//! calls (holds, each acquisition's first and last applied write, lock-call
//! spans), never the events themselves, so a run's memory does not grow with
//! the number of events. Everything runs in O(n log n) in the number of
//! events, plus the size of the output.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub mod stats;

use std::time::Duration;

use redlock_history::History;

mod online;
pub mod outside;
#[cfg(test)]
mod reference;
pub mod verdict;
pub use online::Checker;

/// Why a hold ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HoldEnd {
    /// The client started releasing (`release_start`).
    Released,
    /// The validity (`valid_until`, moved by extensions) ran out first.
    ValidityEnd,
    /// The client learned it lost the lock (`lost` or `validity_expired`).
    Lost,
    /// The history ended while the hold was still valid.
    RunEnd,
}

impl HoldEnd {
    /// `released`, `validity_end`, `lost` or `run_end`.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldEnd::Released => "released",
            HoldEnd::ValidityEnd => "validity_end",
            HoldEnd::Lost => "lost",
            HoldEnd::RunEnd => "run_end",
        }
    }

    /// A phrase for reports: "it started releasing", ...
    pub fn describe(self) -> &'static str {
        match self {
            HoldEnd::Released => "it started releasing",
            HoldEnd::ValidityEnd => "its validity ran out",
            HoldEnd::Lost => "it found it had lost the lock",
            HoldEnd::RunEnd => "the run ended",
        }
    }

    /// Priority when several ends fall at the same instant (lower wins).
    fn rank(self) -> u8 {
        match self {
            HoldEnd::Released => 0,
            HoldEnd::ValidityEnd => 1,
            HoldEnd::Lost => 2,
            HoldEnd::RunEnd => 3,
        }
    }
}

/// The time one acquisition held the lock, in simulated global time.
#[derive(Clone, Debug, PartialEq)]
pub struct Hold {
    /// The client (host) that acquired.
    pub client: String,
    /// The acquisition's number for that client (from 1).
    pub acq: u64,
    /// The lock's key.
    pub resource: String,
    /// The random value the client stored as the key's value.
    pub token: String,
    /// When the lock call returned success (`acquired`).
    pub start: Duration,
    /// When the hold ended (see the module documentation); `>= start`.
    pub end: Duration,
    /// Why it ended then.
    pub end_reason: HoldEnd,
    /// The fencing token, when fencing is on.
    pub fence: Option<u64>,
}

impl Hold {
    /// `end - start`.
    pub fn length(&self) -> Duration {
        self.end.saturating_sub(self.start)
    }
}

/// Two holds of different clients sharing time: a violation.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlap {
    /// The hold that started first (on a tie, the smaller client name).
    pub a: Hold,
    /// The other hold.
    pub b: Hold,
    /// Start of the shared stretch (`b.start`).
    pub from: Duration,
    /// End of the shared stretch (`min(a.end, b.end)`); `> from`.
    pub to: Duration,
}

/// Two acquisitions whose applied writes interleave A, B, A: a violation.
#[derive(Clone, Debug, PartialEq)]
pub struct Interleaving {
    /// The lock's key both acquisitions held.
    pub resource: String,
    /// Acquisition A `(client, acq)`: the one whose applied writes started
    /// first.
    pub first: (String, u64),
    /// Acquisition B, which wrote between two writes of A.
    pub second: (String, u64),
    /// When the store applied the three writes A, B, A: the B write is B's
    /// first applied write, the A writes are the nearest before and after it.
    pub times: [Duration; 3],
    /// The `seq` numbers of those three writes.
    pub seqs: [u32; 3],
    /// The fencing tokens of those three writes (`None` without fencing).
    pub fences: [Option<u64>; 3],
}

/// A write applied after a later acquisition of its resource had
/// succeeded: a violation.
#[derive(Clone, Debug, PartialEq)]
pub struct StaleWrite {
    /// The lock's key.
    pub resource: String,
    /// The writer's acquisition `(client, acq)`.
    pub writer: (String, u64),
    /// The write's number within that acquisition (from 1).
    pub seq: u32,
    /// Its fencing token (`None` without fencing).
    pub fence: Option<u64>,
    /// When the writer's acquisition succeeded.
    pub acquired: Duration,
    /// When the client sent the write (`write_sent`), if the history says.
    pub sent: Option<Duration>,
    /// When the store applied it.
    pub applied: Duration,
    /// The acquisition it landed in: the latest of the resource to have
    /// succeeded by `applied`.
    pub landed_in: (String, u64),
    /// When that acquisition succeeded (`> acquired`, `<= applied`).
    pub landed_in_start: Duration,
    /// When the first acquisition of the resource after the writer's
    /// succeeded: from then on the write was stale (`> acquired`,
    /// `<= landed_in_start`).
    pub superseded_at: Duration,
    /// How it got late, by its send time.
    pub kind: StaleKind,
}

/// How a stale write got late (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StaleKind {
    /// Sent before the later acquisition succeeded, applied after it.
    InFlight,
    /// Sent after the writer's own hold had ended.
    SentLate,
    /// Sent after the later acquisition, while the writer still held.
    InOverlap,
}

impl StaleKind {
    /// Every kind, in the order of the columns.
    pub const ALL: [StaleKind; 3] = [
        StaleKind::InFlight,
        StaleKind::SentLate,
        StaleKind::InOverlap,
    ];

    /// `stale_in_flight`, `stale_sent_late` or `stale_in_overlap`: the
    /// column's name.
    pub fn as_str(self) -> &'static str {
        match self {
            StaleKind::InFlight => "stale_in_flight",
            StaleKind::SentLate => "stale_sent_late",
            StaleKind::InOverlap => "stale_in_overlap",
        }
    }

    /// Its short name in reports: `in flight`, `sent late`, `in overlap`.
    pub fn short(self) -> &'static str {
        match self {
            StaleKind::InFlight => "in flight",
            StaleKind::SentLate => "sent late",
            StaleKind::InOverlap => "in overlap",
        }
    }

    /// The kinds with the largest of `counts` (in [`StaleKind::ALL`]'s
    /// order; several on a tie), none when every count is 0.
    pub fn dominant(counts: [u64; 3]) -> Vec<StaleKind> {
        let top = counts.iter().copied().max().unwrap_or(0);
        let kinds = StaleKind::ALL.into_iter().zip(counts);
        kinds
            .filter(|(_, n)| top > 0 && *n == top)
            .map(|(k, _)| k)
            .collect()
    }

    /// The kind of a write sent at `sent`, the first later acquisition of
    /// its resource having succeeded at `superseded_at` and the writer's
    /// hold ending at `writer_end`.
    pub(crate) fn of(sent: Duration, superseded_at: Duration, writer_end: Duration) -> StaleKind {
        if sent >= writer_end {
            StaleKind::SentLate
        } else if sent < superseded_at {
            StaleKind::InFlight
        } else {
            StaleKind::InOverlap
        }
    }
}

/// How available the lock was.
#[derive(Clone, Debug, PartialEq)]
pub struct Liveness {
    /// Number of lock calls started (`lock_call` events).
    pub attempts: u64,
    /// Number of successful lock calls (`acquired` events).
    pub acquisitions: u64,
    /// Median time from a client's `lock_call` to its next `acquired`, over
    /// successful calls only, in ms; nearest-rank (the value at rank
    /// `ceil(0.5 n)` of the sorted list); 0 when nothing was acquired. A
    /// call its client leaves with neither `acquired` nor `lock_failed`
    /// (the simulation never does) ends, unsuccessful, at the client's next
    /// `lock_call`.
    pub acquire_p50_ms: f64,
    /// 99th percentile of the same list, nearest-rank (rank `ceil(0.99 n)`);
    /// 0 when nothing was acquired.
    pub acquire_p99_ms: f64,
    /// Total time, in ms, during which at least one client was inside a lock
    /// call (from its `lock_call` to its `acquired` or `lock_failed`, or to
    /// its next `lock_call` or the end of the history) while no hold was
    /// active: clients wanted the
    /// lock and nobody had it. Per resource (a hold of another resource
    /// does not count), summed over resources.
    pub unavailable_ms: f64,
}

/// The outcome of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// No overlap, no stale write, no interleaving.
    Safe,
    /// At least one overlap, stale write or interleaving.
    Violation,
    /// No violation, and the run did not exercise what its scenario sets
    /// out to test ([`verdict::Cause`]): it says nothing of safety.
    Inconclusive,
}

impl Verdict {
    /// `safe`, `violation` or `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Violation => "violation",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// Everything the checkers found in one history.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// Every acquisition's hold, in the order of the `acquired` events.
    pub holds: Vec<Hold>,
    /// Lock overlaps, ordered by `from`.
    pub overlaps: Vec<Overlap>,
    /// Write interleavings, ordered by the time of their first write.
    pub interleavings: Vec<Interleaving>,
    /// Stale writes, in the order the store applied them.
    pub stale_writes: Vec<StaleWrite>,
    /// Writes the store refused because their fencing token was stale
    /// (`write_rejected` events).
    pub rejected_writes: u64,
    /// Availability figures.
    pub liveness: Liveness,
    /// Writes applied while nobody owned the lock, not stale: the lab's
    /// outside checker counts them ([`outside`]); `None` in the simulation,
    /// whose checker knows the holds from inside the clients.
    pub unprotected_writes: Option<u64>,
    /// `Violation` when `overlaps`, `stale_writes` or `interleavings` is
    /// not empty; otherwise `Inconclusive` when `inconclusive` is not
    /// empty ([`verdict::conclude`]), else `Safe`.
    pub verdict: Verdict,
    /// Why the run did not exercise what its scenario sets out to test
    /// (given by the runner, not the checker): see [`verdict::Cause`].
    pub inconclusive: Vec<verdict::Cause>,
}

impl CheckResult {
    /// The stale writes of each kind, in [`StaleKind::ALL`]'s order; they
    /// add up to `stale_writes.len()`.
    pub fn stale_split(&self) -> [u64; 3] {
        StaleKind::ALL.map(|k| self.stale_writes.iter().filter(|w| w.kind == k).count() as u64)
    }

    /// `Violation` when there is an overlap, a stale write or an
    /// interleaving: the one rule, for the simulation's checker and the lab's.
    pub(crate) fn verdict_of_violations(&self) -> Verdict {
        if self.overlaps.is_empty() && self.stale_writes.is_empty() && self.interleavings.is_empty()
        {
            Verdict::Safe
        } else {
            Verdict::Violation
        }
    }
}

/// Runs every checker over `history` (whose events are in time order, as a
/// [`redlock_history::Recorder`] gives them). Panics (a bug of the
/// harness, exit 70) on an event out of time order or an acquisition id
/// seen twice: see [`Checker::feed`].
pub fn check(history: &History) -> CheckResult {
    let mut c = Checker::default();
    for e in &history.events {
        c.feed(e);
    }
    c.finish()
}

/// Every pair of holds of the same resource by different clients sharing a
/// stretch of positive length: sort by start, then compare each hold with
/// the later-starting holds that start before it ends.
fn overlaps(holds: &[Hold]) -> Vec<Overlap> {
    let mut order: Vec<usize> = (0..holds.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&holds[i], &holds[j]);
        (a.start, &a.client, a.acq, i).cmp(&(b.start, &b.client, b.acq, j))
    });
    let mut out = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let a = &holds[i];
        for &j in &order[k + 1..] {
            let b = &holds[j];
            if b.start >= a.end {
                break;
            }
            let to = a.end.min(b.end);
            if a.client != b.client && a.resource == b.resource && to > b.start {
                out.push(Overlap {
                    a: a.clone(),
                    b: b.clone(),
                    from: b.start,
                    to,
                });
            }
        }
    }
    out.sort_by(|x, y| {
        (x.from, x.to, &x.a.client, x.a.acq, &x.b.client, x.b.acq).cmp(&(
            y.from,
            y.to,
            &y.a.client,
            y.a.acq,
            &y.b.client,
            y.b.acq,
        ))
    });
    out
}

pub(crate) fn millis_f64(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

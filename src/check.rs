//! The checkers: pure functions over a finished [`History`].
//!
//! [`check`] derives every acquisition's hold, finds the two kinds of
//! violation described in `scenario-format.md` ("What is checked") and
//! measures liveness. The definitions below are the contract behind the
//! columns of `runs.csv` and the fields of `summary.json`:
//!
//! - **Hold** ([`Hold`]): an acquisition (an `acquired` event) holds the lock
//!   from the time of that event until the earliest of
//!   - the start of its release (`release_start`),
//!   - the end of its validity: `valid_until` of `acquired`, replaced by the
//!     `valid_until` of the latest `extended` event of the same acquisition,
//!   - a `lost` or `validity_expired` event of the acquisition,
//!   - the time of the last event of the history (the hold was still open
//!     when the run ended).
//!
//!   When several of these fall at the same instant the reason reported is
//!   the first in that list. A hold never ends before it starts.
//! - **Lock overlap** ([`Overlap`], `lock_overlaps`): two holds of two
//!   *different* clients whose intervals share a stretch of time of positive
//!   length. Touching holds (`a.end == b.start`) do not overlap, and a hold
//!   of length zero overlaps nothing. Each unordered pair of acquisitions
//!   counts once, however long they overlap.
//! - **Write interleaving** ([`Interleaving`], `write_interleavings`): the
//!   store records its applied writes (`write_applied`) in the order it
//!   applies them. Two acquisitions of *different* clients interleave when
//!   their applied writes come in the order A, B, A (B wrote between two
//!   writes of A). Each unordered pair counts once. Writes the store refused
//!   (`write_rejected`, fencing) are counted in `rejected_writes` and take no
//!   part in interleaving.
//! - **Verdict**: `violation` when `lock_overlaps + write_interleavings > 0`,
//!   else `safe`.
//! - **Liveness** ([`Liveness`]): see the fields.
//!
//! Everything runs in O(n log n) in the number of events, plus the size of
//! the output (the number of violating pairs).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::history::{EventKind, History};

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

/// How available the lock was.
#[derive(Clone, Debug, PartialEq)]
pub struct Liveness {
    /// Number of lock calls started (`lock_call` events).
    pub attempts: u64,
    /// Number of successful lock calls (`acquired` events).
    pub acquisitions: u64,
    /// Median time from a client's `lock_call` to its next `acquired`, over
    /// successful calls only, in ms; nearest-rank (the value at rank
    /// `ceil(0.5 n)` of the sorted list); 0 when nothing was acquired.
    pub acquire_p50_ms: f64,
    /// 99th percentile of the same list, nearest-rank (rank `ceil(0.99 n)`);
    /// 0 when nothing was acquired.
    pub acquire_p99_ms: f64,
    /// Total time, in ms, during which at least one client was inside a lock
    /// call (from its `lock_call` to its `acquired` or `lock_failed`, or to
    /// the end of the history) while no hold was active: clients wanted the
    /// lock and nobody had it.
    pub unavailable_ms: f64,
}

/// The outcome of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// No overlap and no interleaving.
    Safe,
    /// At least one overlap or interleaving.
    Violation,
}

impl Verdict {
    /// `safe` or `violation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Violation => "violation",
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
    /// Writes the store refused because their fencing token was stale
    /// (`write_rejected` events).
    pub rejected_writes: u64,
    /// Availability figures.
    pub liveness: Liveness,
    /// `Violation` when `overlaps` or `interleavings` is not empty.
    pub verdict: Verdict,
}

/// Runs every checker over `history` (whose events are in time order, as
/// [`crate::history::Recorder::finish`] gives them).
pub fn check(history: &History) -> CheckResult {
    let holds = holds(history);
    let overlaps = overlaps(&holds);
    let interleavings = interleavings(history);
    let rejected_writes = history
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::WriteRejected { .. }))
        .count() as u64;
    let liveness = liveness(history, &holds);
    let verdict = if overlaps.is_empty() && interleavings.is_empty() {
        Verdict::Safe
    } else {
        Verdict::Violation
    };
    CheckResult {
        holds,
        overlaps,
        interleavings,
        rejected_writes,
        liveness,
        verdict,
    }
}

/// The time of the last event (the largest time, defensively).
fn last_time(history: &History) -> Duration {
    history
        .events
        .iter()
        .map(|e| e.time)
        .max()
        .unwrap_or(Duration::ZERO)
}

/// Derives every acquisition's hold.
fn holds(history: &History) -> Vec<Hold> {
    struct Acc<'a> {
        client: &'a str,
        acq: u64,
        token: &'a str,
        start: Duration,
        valid_until: Duration,
        fence: Option<u64>,
        release: Option<Duration>,
        lost: Option<Duration>,
    }
    let mut accs: Vec<Acc> = Vec::new();
    let mut index: BTreeMap<(&str, u64), usize> = BTreeMap::new();
    let earliest = |slot: &mut Option<Duration>, t: Duration| {
        *slot = Some(slot.map_or(t, |s| s.min(t)));
    };
    for e in &history.events {
        let host = e.host.as_str();
        match &e.kind {
            EventKind::Acquired {
                acq,
                token,
                valid_until,
                fence,
                ..
            } => {
                // A repeated (client, acq) would be a recorder bug: keep the first.
                if let std::collections::btree_map::Entry::Vacant(v) = index.entry((host, *acq)) {
                    v.insert(accs.len());
                    accs.push(Acc {
                        client: host,
                        acq: *acq,
                        token,
                        start: e.time,
                        valid_until: *valid_until,
                        fence: *fence,
                        release: None,
                        lost: None,
                    });
                }
            }
            EventKind::Extended {
                acq, valid_until, ..
            } => {
                if let Some(&i) = index.get(&(host, *acq)) {
                    accs[i].valid_until = *valid_until;
                }
            }
            // A client whose clock changes rate mid-hold reaches the end of
            // its validity (on its own clock) sooner or later in global time.
            EventKind::Fault { what, detail } if what == "clock-rate" => {
                let field = |k: &str| {
                    detail
                        .split(' ')
                        .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
                };
                let num = |k: &str| {
                    field(k)
                        .and_then(|v| v.parse::<f64>().ok())
                        .filter(|v| *v > 0.0)
                };
                if let (Some(who), Some(rate), Some(from)) =
                    (field("host"), num("rate"), num("from"))
                {
                    for a in accs
                        .iter_mut()
                        .filter(|a| a.client == who && a.valid_until > e.time)
                    {
                        let rest = (a.valid_until - e.time).as_secs_f64() * from / rate;
                        a.valid_until = e.time + Duration::from_secs_f64(rest.min(1e9));
                    }
                }
            }
            EventKind::ReleaseStart { acq } => {
                if let Some(&i) = index.get(&(host, *acq)) {
                    earliest(&mut accs[i].release, e.time);
                }
            }
            EventKind::Lost { acq, .. } | EventKind::ValidityExpired { acq } => {
                if let Some(&i) = index.get(&(host, *acq)) {
                    earliest(&mut accs[i].lost, e.time);
                }
            }
            _ => {}
        }
    }
    let run_end = last_time(history);
    accs.into_iter()
        .map(|a| {
            let mut ends = vec![
                (a.valid_until, HoldEnd::ValidityEnd),
                (run_end, HoldEnd::RunEnd),
            ];
            if let Some(t) = a.release {
                ends.push((t, HoldEnd::Released));
            }
            if let Some(t) = a.lost {
                ends.push((t, HoldEnd::Lost));
            }
            let (end, end_reason) = ends
                .into_iter()
                .min_by_key(|(t, r)| (*t, r.rank()))
                .unwrap_or((a.start, HoldEnd::RunEnd));
            Hold {
                client: a.client.to_string(),
                acq: a.acq,
                token: a.token.to_string(),
                start: a.start,
                end: end.max(a.start),
                end_reason,
                fence: a.fence,
            }
        })
        .collect()
}

/// Every pair of holds of different clients sharing a stretch of positive
/// length: sort by start, then compare each hold with the later-starting
/// holds that start before it ends.
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
            if a.client != b.client && to > b.start {
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

/// Write interleavings. With distinct positions in the apply order, A and B
/// interleave (A, B, A or B, A, B) exactly when the spans from their first
/// to their last applied write overlap: if A's first write comes first and
/// B's first write comes before A's last, B's first write sits between two
/// writes of A. So this is the same sweep as for holds, over positions.
fn interleavings(history: &History) -> Vec<Interleaving> {
    struct W {
        time: Duration,
        seq: u32,
        fence: Option<u64>,
    }
    struct Acq<'a> {
        client: &'a str,
        acq: u64,
        /// Positions in the apply order (increasing).
        pos: Vec<usize>,
    }
    let mut writes: Vec<W> = Vec::new();
    let mut acqs: Vec<Acq> = Vec::new();
    let mut index: BTreeMap<(&str, u64), usize> = BTreeMap::new();
    for e in &history.events {
        if let EventKind::WriteApplied {
            client,
            acq,
            seq,
            fence,
        } = &e.kind
        {
            let p = writes.len();
            writes.push(W {
                time: e.time,
                seq: *seq,
                fence: *fence,
            });
            let i = *index.entry((client.as_str(), *acq)).or_insert_with(|| {
                acqs.push(Acq {
                    client,
                    acq: *acq,
                    pos: Vec::new(),
                });
                acqs.len() - 1
            });
            acqs[i].pos.push(p);
        }
    }
    // `acqs` is already ordered by first position.
    let mut out = Vec::new();
    for (k, a) in acqs.iter().enumerate() {
        let (Some(&a_first), Some(&a_last)) = (a.pos.first(), a.pos.last()) else {
            continue;
        };
        for b in &acqs[k + 1..] {
            let Some(&b_first) = b.pos.first() else {
                continue;
            };
            if b_first > a_last {
                break;
            }
            if a.client == b.client || b_first < a_first {
                continue;
            }
            // a_first < b_first < a_last: the A writes around b_first.
            let after = a.pos.partition_point(|&p| p < b_first);
            let (Some(&before), Some(&next)) = (
                after.checked_sub(1).and_then(|i| a.pos.get(i)),
                a.pos.get(after),
            ) else {
                continue;
            };
            let three = [&writes[before], &writes[b_first], &writes[next]];
            out.push(Interleaving {
                first: (a.client.to_string(), a.acq),
                second: (b.client.to_string(), b.acq),
                times: three.map(|w| w.time),
                seqs: three.map(|w| w.seq),
                fences: three.map(|w| w.fence),
            });
        }
    }
    out.sort_by(|x, y| (x.times, &x.first, &x.second).cmp(&(y.times, &y.first, &y.second)));
    out
}

/// Nearest-rank percentile of a sorted list (0 when empty).
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Attempts, acquisitions, acquire latency and unavailability.
fn liveness(history: &History, holds: &[Hold]) -> Liveness {
    let run_end = last_time(history);
    let mut attempts = 0u64;
    let mut acquisitions = 0u64;
    let mut latencies: Vec<f64> = Vec::new();
    // Open lock calls per client: when each started.
    let mut pending: BTreeMap<&str, Duration> = BTreeMap::new();
    // (time, change in open calls, change in active holds)
    let mut changes: Vec<(Duration, i64, i64)> = Vec::new();
    for e in &history.events {
        let host = e.host.as_str();
        match &e.kind {
            EventKind::LockCall { .. } => {
                attempts += 1;
                if let Some(prev) = pending.insert(host, e.time) {
                    // A call left open (not expected): it ends here.
                    changes.push((prev, 1, 0));
                    changes.push((e.time, -1, 0));
                }
            }
            EventKind::Acquired { .. } => {
                acquisitions += 1;
                if let Some(start) = pending.remove(host) {
                    latencies.push(ms(e.time.saturating_sub(start)));
                    changes.push((start, 1, 0));
                    changes.push((e.time, -1, 0));
                }
            }
            EventKind::LockFailed { .. } => {
                if let Some(start) = pending.remove(host) {
                    changes.push((start, 1, 0));
                    changes.push((e.time, -1, 0));
                }
            }
            _ => {}
        }
    }
    for start in pending.into_values() {
        changes.push((start, 1, 0));
        changes.push((run_end.max(start), -1, 0));
    }
    for h in holds {
        if h.end > h.start {
            changes.push((h.start, 0, 1));
            changes.push((h.end, 0, -1));
        }
    }
    changes.sort_by_key(|c| c.0);
    let (mut calls, mut active) = (0i64, 0i64);
    let mut unavailable = Duration::ZERO;
    let mut i = 0;
    while i < changes.len() {
        let t = changes[i].0;
        while i < changes.len() && changes[i].0 == t {
            calls += changes[i].1;
            active += changes[i].2;
            i += 1;
        }
        if let Some(next) = changes.get(i) {
            if calls > 0 && active <= 0 {
                unavailable += next.0 - t;
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    Liveness {
        attempts,
        acquisitions,
        acquire_p50_ms: nearest_rank(&latencies, 50.0),
        acquire_p99_ms: nearest_rank(&latencies, 99.0),
        unavailable_ms: ms(unavailable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_matches_definition() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(nearest_rank(&v, 50.0), 2.0);
        assert_eq!(nearest_rank(&v, 99.0), 4.0);
        assert_eq!(nearest_rank(&[], 50.0), 0.0);
        assert_eq!(nearest_rank(&[7.0], 99.0), 7.0);
    }
}

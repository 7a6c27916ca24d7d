//! A reference checker, for tests only: the definitions of the parent
//! module's documentation (and "What is checked" in
//! `docs/scenario-format.md`) applied as literally as the text reads, over
//! the whole history held in memory: every acquisition against every
//! other, every write against every acquisition. Quadratic and slow on
//! purpose. It shares no code with the online checker ([`super::Checker`]),
//! only the result types, so the property test in `tests` compares two
//! independent readings of the same text.
//!
//! Everything [`CheckResult`] holds is computed, and the property test
//! compares all of it. Where the text leaves an order open (overlaps that
//! share their `from`, interleavings that share their times), the reference
//! breaks ties by the fields that follow, as the result types' documentation
//! lists them.
//!
//! Three readings the text needed, now written into the definitions:
//! - A `reentry_failed` event ends a hold like `lost` and
//!   `validity_expired`: the event's own documentation says so ("the hold
//!   ends, as after a failed validity check").
//! - Validity runs on the client's own clock: `valid_until` is when that
//!   clock, at the rate it had when the event was recorded, reaches the end;
//!   a `clock-rate` fault on the client after that moves the end in global
//!   time. The reference builds the client's clock from its `clock-rate`
//!   faults and finds when it reaches the same reading.
//! - A lock call left with no outcome before its client's next `lock_call`
//!   ends there, unsuccessful ("to its next `acquired`" could also be read
//!   as that `acquired` ending both calls, giving one acquisition two
//!   latencies).
//!
//! The lab's checker ([`super::outside`]) has definitions of its own
//! (ownership read from the nodes' keys); it hands its acquisitions to
//! [`super::Checker`] for overlaps and interleavings, which is what is
//! compared here.

use std::time::Duration;

use super::{
    CheckResult, Hold, HoldEnd, Interleaving, Liveness, Overlap, StaleKind, StaleWrite, Verdict,
};
use redlock_history::{Event, EventKind, FaultEvent, History};

mod gen;
mod tests;

/// One `acquired` event, with its position in the history.
struct Acquisition<'h> {
    index: usize,
    client: &'h str,
    acq: u64,
    resource: &'h str,
    token: &'h str,
    start: Duration,
    valid_until: Duration,
    fence: Option<u64>,
}

/// One `write_applied` event, with its position in the history.
struct Applied<'h> {
    index: usize,
    time: Duration,
    client: &'h str,
    acq: u64,
    seq: u32,
    fence: Option<u64>,
    resource: &'h str,
}

/// What the definitions say of `history`.
pub(super) fn reference(history: &History) -> CheckResult {
    let acquisitions = acquisitions(history);
    let holds: Vec<Hold> = acquisitions.iter().map(|a| hold(history, a)).collect();
    let writes = applied_writes(history);
    let stale_writes = writes
        .iter()
        .filter_map(|w| stale(history, &acquisitions, &holds, w))
        .collect();
    let rejected_writes = history
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::WriteRejected { .. }))
        .count() as u64;
    let mut result = CheckResult {
        overlaps: overlaps(&holds),
        interleavings: interleavings(&writes),
        stale_writes,
        rejected_writes,
        liveness: liveness(history, &holds),
        unprotected_writes: None,
        verdict: Verdict::Safe,
        inconclusive: Vec::new(),
        holds,
    };
    let violations = result.overlaps.len() + result.stale_writes.len() + result.interleavings.len();
    if violations > 0 {
        result.verdict = Verdict::Violation;
    }
    result
}

fn acquisitions(history: &History) -> Vec<Acquisition<'_>> {
    let mut out = Vec::new();
    for (index, e) in history.events.iter().enumerate() {
        if let EventKind::Acquired {
            acq,
            resource,
            token,
            valid_until,
            fence,
            ..
        } = &e.kind
        {
            out.push(Acquisition {
                index,
                client: &e.host,
                acq: *acq,
                resource,
                token,
                start: e.time,
                valid_until: *valid_until,
                fence: *fence,
            });
        }
    }
    out
}

fn applied_writes(history: &History) -> Vec<Applied<'_>> {
    let mut out = Vec::new();
    for (index, e) in history.events.iter().enumerate() {
        if let EventKind::WriteApplied {
            client,
            acq,
            seq,
            fence,
            resource,
        } = &e.kind
        {
            out.push(Applied {
                index,
                time: e.time,
                client,
                acq: *acq,
                seq: *seq,
                fence: *fence,
                resource,
            });
        }
    }
    out
}

fn run_end(history: &History) -> Duration {
    history.events.last().map_or(Duration::ZERO, |e| e.time)
}

/// The events of `a`'s client after `a`'s `acquired` event, with their
/// positions.
fn later_events_of<'h>(
    history: &'h History,
    a: &'h Acquisition,
) -> impl Iterator<Item = (usize, &'h Event)> + 'h {
    history
        .events
        .iter()
        .enumerate()
        .skip(a.index + 1)
        .filter(move |(_, e)| e.host == a.client)
}

/// The hold of `a`: the earliest of its ends, the first in the list of the
/// definition on a tie, never before its start.
fn hold(history: &History, a: &Acquisition) -> Hold {
    let first_time = |is_end: &dyn Fn(&EventKind) -> bool| {
        later_events_of(history, a)
            .filter(|(_, e)| is_end(&e.kind))
            .map(|(_, e)| e.time)
            .min()
    };
    let released = first_time(&|k| matches!(k, EventKind::ReleaseStart { acq } if *acq == a.acq));
    let lost = first_time(&|k| match k {
        EventKind::Lost { acq, .. }
        | EventKind::ValidityExpired { acq }
        | EventKind::ReentryFailed { acq, .. } => *acq == a.acq,
        _ => false,
    });
    let ends = [
        (released, HoldEnd::Released),
        (Some(validity_end(history, a)), HoldEnd::ValidityEnd),
        (lost, HoldEnd::Lost),
        (Some(run_end(history)), HoldEnd::RunEnd),
    ];
    let mut earliest: Option<(Duration, HoldEnd)> = None;
    for (time, why) in ends {
        let Some(time) = time else { continue };
        if earliest.is_none_or(|(best, _)| time < best) {
            earliest = Some((time, why));
        }
    }
    let (end, end_reason) = earliest.expect("the validity end is always there");
    Hold {
        client: a.client.to_string(),
        acq: a.acq,
        resource: a.resource.to_string(),
        token: a.token.to_string(),
        start: a.start,
        end: end.max(a.start),
        end_reason,
        fence: a.fence,
    }
}

/// When the client's own clock reaches the end of the validity that the
/// latest `extended` event of `a` (or else its `acquired` event) gave.
fn validity_end(history: &History, a: &Acquisition) -> Duration {
    let latest_extension = later_events_of(history, a)
        .filter_map(|(i, e)| match &e.kind {
            EventKind::Extended {
                acq, valid_until, ..
            } if *acq == a.acq => Some((i, e.time, *valid_until)),
            _ => None,
        })
        .last();
    let (index, said_at, until) = latest_extension.unwrap_or((a.index, a.start, a.valid_until));
    if until <= said_at {
        return until;
    }
    let clock = OwnClock::of(history, a.client);
    let left = (until - said_at).as_nanos() as f64 * clock.rate_when_recorded(index);
    clock.when_reading(clock.reading_at(said_at) + left)
}

/// A client's own clock, from its `clock-rate` faults: a reading of 0 at
/// global time 0, then running at each rate from the fault that set it.
struct OwnClock {
    /// `(from global time, rate, index of the fault's event)`; the first
    /// is the rate before any fault (the first fault's `from`, else 1).
    rates: Vec<(Duration, f64, usize)>,
}

impl OwnClock {
    fn of(history: &History, client: &str) -> OwnClock {
        let mut rates = Vec::new();
        for (i, e) in history.events.iter().enumerate() {
            if let EventKind::Fault(FaultEvent::ClockRate { host, rate, from }) = &e.kind {
                if host == client {
                    if rates.is_empty() {
                        rates.push((Duration::ZERO, *from, 0));
                    }
                    rates.push((e.time, *rate, i));
                }
            }
        }
        if rates.is_empty() {
            rates.push((Duration::ZERO, 1.0, 0));
        }
        OwnClock { rates }
    }

    /// The rate the client's clock had when event `index` was recorded:
    /// set by the last fault recorded before it.
    fn rate_when_recorded(&self, index: usize) -> f64 {
        let mut set_before = self.rates[1..].iter().filter(|(_, _, i)| *i < index);
        set_before.next_back().unwrap_or(&self.rates[0]).1
    }

    /// Each stretch of global time with its rate: `(from, to, rate)`, the
    /// last one open.
    fn stretches(&self) -> impl Iterator<Item = (Duration, Option<Duration>, f64)> + '_ {
        (0..self.rates.len()).map(|k| {
            let next = self.rates.get(k + 1).map(|r| r.0);
            (self.rates[k].0, next, self.rates[k].1)
        })
    }

    /// The clock's reading at global time `t`, in ns.
    fn reading_at(&self, t: Duration) -> f64 {
        let mut reading = 0.0;
        for (from, to, rate) in self.stretches() {
            let to = to.map_or(t, |to| to.min(t));
            reading += to.saturating_sub(from).as_nanos() as f64 * rate;
        }
        reading
    }

    /// The first global time at which the clock reads `reading` (ns).
    fn when_reading(&self, reading: f64) -> Duration {
        let mut so_far = 0.0;
        for (from, to, rate) in self.stretches() {
            let length = to.map(|to| (to - from).as_nanos() as f64 * rate);
            if length.is_none_or(|length| reading <= so_far + length) {
                let ns = from.as_nanos() as f64 + (reading - so_far) / rate;
                return Duration::from_nanos(ns.round() as u64);
            }
            so_far += length.unwrap_or(0.0);
        }
        unreachable!("the last stretch is open")
    }
}

/// Every pair of holds of one resource by different clients whose
/// intervals share a stretch of positive length.
fn overlaps(holds: &[Hold]) -> Vec<Overlap> {
    let mut out = Vec::new();
    for (i, x) in holds.iter().enumerate() {
        for y in &holds[i + 1..] {
            if x.resource != y.resource || x.client == y.client {
                continue;
            }
            let x_first = (x.start, &x.client, x.acq) < (y.start, &y.client, y.acq);
            let (a, b) = if x_first { (x, y) } else { (y, x) };
            let shared_from = a.start.max(b.start);
            let shared_to = a.end.min(b.end);
            if shared_to > shared_from {
                out.push(Overlap {
                    a: a.clone(),
                    b: b.clone(),
                    from: shared_from,
                    to: shared_to,
                });
            }
        }
    }
    out.sort_by(|x, y| {
        let key = |o: &Overlap| {
            (
                o.from,
                o.to,
                o.a.client.clone(),
                o.a.acq,
                o.b.client.clone(),
                o.b.acq,
            )
        };
        key(x).cmp(&key(y))
    });
    out
}

/// `w` as a stale write, if an acquisition of its resource succeeded after
/// its writer's and no later than `w` was applied.
fn stale(
    history: &History,
    acquisitions: &[Acquisition],
    holds: &[Hold],
    w: &Applied,
) -> Option<StaleWrite> {
    let mine = acquisitions
        .iter()
        .position(|a| a.client == w.client && a.acq == w.acq)?;
    let a = &acquisitions[mine];
    let of_resource = || acquisitions.iter().filter(|b| b.resource == w.resource);
    if !of_resource().any(|b| a.start < b.start && b.start <= w.time) {
        return None;
    }
    let superseded_at = of_resource()
        .map(|b| b.start)
        .filter(|&start| start > a.start)
        .min()?;
    let landed = of_resource()
        .filter(|b| b.start <= w.time)
        .max_by_key(|b| (b.start, b.index))?;
    let sent = sent_time(history, w);
    let s = sent.unwrap_or(w.time);
    let writer_end = holds[mine].end;
    let kind = if s >= writer_end {
        StaleKind::SentLate
    } else if s < superseded_at {
        StaleKind::InFlight
    } else {
        assert!(superseded_at <= s && s < writer_end);
        StaleKind::InOverlap
    };
    Some(StaleWrite {
        resource: w.resource.to_string(),
        writer: (w.client.to_string(), w.acq),
        seq: w.seq,
        fence: w.fence,
        acquired: a.start,
        sent,
        applied: w.time,
        landed_in: (landed.client.to_string(), landed.acq),
        landed_in_start: landed.start,
        superseded_at,
        kind,
    })
}

/// When the client sent `w`: its latest `write_sent` before `w` was applied.
fn sent_time(history: &History, w: &Applied) -> Option<Duration> {
    let before = history.events[..w.index].iter();
    let mut sends = before.filter(|e| {
        e.host == w.client
            && matches!(e.kind, EventKind::WriteSent { acq, seq } if acq == w.acq && seq == w.seq)
    });
    sends.next_back().map(|e| e.time)
}

/// A writer: `(client, acq, resource)` of applied writes.
type Writer<'h> = (&'h str, u64, &'h str);

fn writer_of<'h>(w: &Applied<'h>) -> Writer<'h> {
    (w.client, w.acq, w.resource)
}

/// Every pair of writers of one resource by different clients whose
/// applied writes come in the order A, B, A (or B, A, B).
fn interleavings(writes: &[Applied]) -> Vec<Interleaving> {
    let mut writers: Vec<Writer> = Vec::new();
    for w in writes {
        if !writers.contains(&writer_of(w)) {
            writers.push(writer_of(w));
        }
    }
    let mut out = Vec::new();
    for (i, &x) in writers.iter().enumerate() {
        for &y in &writers[i + 1..] {
            if x.0 == y.0 || x.2 != y.2 {
                continue;
            }
            let both: Vec<&Applied> = writes
                .iter()
                .filter(|w| writer_of(w) == x || writer_of(w) == y)
                .collect();
            if has_a_b_a(&both) {
                // `writers` is in order of first write: x started first.
                out.push(interleaving(&both, x, y));
            }
        }
    }
    out.sort_by(|p, q| (p.times, &p.first, &p.second).cmp(&(q.times, &q.first, &q.second)));
    out
}

/// Is there a write, then one of the other writer, then one of the first?
fn has_a_b_a(writes: &[&Applied]) -> bool {
    let n = writes.len();
    (0..n).any(|i| {
        (i + 1..n).any(|j| {
            (j + 1..n).any(|k| {
                let (a, b, c) = (
                    writer_of(writes[i]),
                    writer_of(writes[j]),
                    writer_of(writes[k]),
                );
                a == c && a != b
            })
        })
    })
}

/// The interleaving of `a` (which wrote first) and `b`: B's first write
/// with A's nearest writes before and after it.
fn interleaving(writes: &[&Applied], a: Writer, b: Writer) -> Interleaving {
    let b_first = writes
        .iter()
        .position(|w| writer_of(w) == b)
        .expect("b wrote");
    let is_a = |w: &&&Applied| writer_of(w) == a;
    let before = writes[..b_first]
        .iter()
        .rev()
        .find(is_a)
        .expect("a wrote first");
    let after = writes[b_first..]
        .iter()
        .find(is_a)
        .expect("a wrote after b");
    let three = [before, &writes[b_first], after];
    Interleaving {
        resource: a.2.to_string(),
        first: (a.0.to_string(), a.1),
        second: (b.0.to_string(), b.1),
        times: three.map(|w| w.time),
        seqs: three.map(|w| w.seq),
        fences: three.map(|w| w.fence),
    }
}

/// One lock call: its client's `lock_call` to the client's next
/// `acquired`, `lock_failed` or `lock_call`, or to the end of the history;
/// successful when that is an `acquired`.
struct Call {
    resource: String,
    start: Duration,
    end: Duration,
    acquired: bool,
}

fn calls(history: &History) -> Vec<Call> {
    let mut out = Vec::new();
    for (i, e) in history.events.iter().enumerate() {
        let EventKind::LockCall { resource, .. } = &e.kind else {
            continue;
        };
        let outcome = history.events[i + 1..].iter().find(|o| {
            o.host == e.host
                && matches!(
                    o.kind,
                    EventKind::Acquired { .. }
                        | EventKind::LockFailed { .. }
                        | EventKind::LockCall { .. }
                )
        });
        out.push(Call {
            resource: resource.clone(),
            start: e.time,
            end: outcome.map_or(run_end(history), |o| o.time),
            acquired: outcome.is_some_and(|o| matches!(o.kind, EventKind::Acquired { .. })),
        });
    }
    out
}

fn liveness(history: &History, holds: &[Hold]) -> Liveness {
    let count =
        |is: fn(&EventKind) -> bool| history.events.iter().filter(|e| is(&e.kind)).count() as u64;
    let calls = calls(history);
    let mut latencies: Vec<Duration> = calls
        .iter()
        .filter(|c| c.acquired)
        .map(|c| c.end - c.start)
        .collect();
    latencies.sort();
    Liveness {
        attempts: count(|k| matches!(k, EventKind::LockCall { .. })),
        acquisitions: count(|k| matches!(k, EventKind::Acquired { .. })),
        acquire_p50_ms: nearest_rank(&latencies, 0.5),
        acquire_p99_ms: nearest_rank(&latencies, 0.99),
        unavailable_ms: millis_f64(unavailable(&calls, holds)),
    }
}

/// The value at rank `ceil(p n)` (from 1) of `sorted`, in ms; 0 when empty.
fn nearest_rank(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    millis_f64(sorted[rank.max(1) - 1])
}

fn millis_f64(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Per resource, the time some call was open while no hold was active,
/// summed: cut time at every start and end, and look at each piece.
fn unavailable(calls: &[Call], holds: &[Hold]) -> Duration {
    let mut resources: Vec<&str> = calls.iter().map(|c| c.resource.as_str()).collect();
    resources.sort();
    resources.dedup();
    let mut total = Duration::ZERO;
    for r in resources {
        let calls: Vec<(Duration, Duration)> = calls
            .iter()
            .filter(|c| c.resource == r)
            .map(|c| (c.start, c.end))
            .collect();
        let holds: Vec<(Duration, Duration)> = holds
            .iter()
            .filter(|h| h.resource == r)
            .map(|h| (h.start, h.end))
            .collect();
        let mut cuts: Vec<Duration> = calls
            .iter()
            .chain(&holds)
            .flat_map(|&(s, e)| [s, e])
            .collect();
        cuts.sort();
        cuts.dedup();
        for piece in cuts.windows(2) {
            let covers = |&(s, e): &(Duration, Duration)| s <= piece[0] && piece[1] <= e;
            if calls.iter().any(covers) && !holds.iter().any(covers) {
                total += piece[1] - piece[0];
            }
        }
    }
    total
}

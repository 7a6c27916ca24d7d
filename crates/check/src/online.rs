//! The online checker: fed a run's events in time order, it keeps a few
//! words per acquisition and per lock call (never the events) and derives
//! the verdict and figures at the end. The definitions are in the parent
//! module's documentation.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{
    millis_f64, overlaps, CheckResult, Hold, HoldEnd, Interleaving, Liveness, StaleKind,
    StaleWrite, Verdict,
};
use crate::stats::percentile;
use redlock_history::{EventKind, FaultEvent};

/// A client or resource name, interned: an index into `Checker::names`.
type Name = u32;
/// An acquisition: `(client, acq)` with the client interned.
type Key = (Name, u64);

/// One acquisition as the events tell it so far.
struct Acquisition {
    client: Name,
    acq: u64,
    resource: Name,
    token: String,
    start: Duration,
    valid_until: Duration,
    fence: Option<u64>,
    release: Option<Duration>,
    lost: Option<Duration>,
    /// Its applied writes, once it has some.
    written: Option<Written>,
}

/// One applied write, as the checkers need it.
#[derive(Clone, Copy)]
struct AppliedWrite {
    time: Duration,
    seq: u32,
    fence: Option<u64>,
}

/// The applied writes of one acquisition: its first and its latest, with
/// their positions in the store's apply order.
struct Written {
    resource: Name,
    first: (u64, AppliedWrite),
    last: (u64, AppliedWrite),
}

/// A write applied at the present instant: whether it is stale is decided
/// once every acquisition of that instant is known.
struct Pending {
    writer: Key,
    resource: Name,
    w: AppliedWrite,
    sent: Option<Duration>,
}

/// The online checker: feed it a run's events in time order, then
/// [`Checker::finish`]. Names are interned, so what it keeps per
/// acquisition and per lock call is a few words.
#[derive(Default)]
pub struct Checker {
    names: Vec<String>,
    ids: BTreeMap<String, Name>,
    accs: Vec<Acquisition>,
    /// Per client, the index in `accs` of its acquisition `n` at `n - 1`
    /// (clients number them 1, 2, 3, ...).
    index: BTreeMap<Name, Vec<usize>>,
    /// Acquisitions out of that order (a hand-written history), and the
    /// writes of acquisitions the history never showed.
    odd: BTreeMap<Key, usize>,
    unknown_writes: BTreeMap<Key, Written>,
    /// Resource -> index in `accs` of its latest acquisition.
    latest: BTreeMap<Name, usize>,
    /// Resource -> the start of each of its acquisitions, in time order.
    starts: BTreeMap<Name, Vec<Duration>>,
    /// Writes sent and not yet applied or refused: `(client, acq, seq)` ->
    /// when sent.
    sent: BTreeMap<(Name, u64, u32), Duration>,
    /// The time of the latest event fed.
    now: Duration,
    pending: Vec<Pending>,
    /// The stale writes, each with its writer's index in `accs` (its kind
    /// is decided at the end, when the writer's hold is known).
    stale: Vec<(usize, StaleWrite)>,
    /// Position of the next applied write in the store's apply order.
    position: u64,
    /// Per resource, `(position, acquisition)` of each acquisition's first
    /// applied write, in apply order.
    firsts: BTreeMap<Name, Vec<(u64, Key)>>,
    pairs: BTreeSet<(Key, Key)>,
    interleavings: Vec<Interleaving>,
    rejected_writes: u64,
    attempts: u64,
    acquisitions: u64,
    latencies: Vec<f64>,
    /// Open lock calls: client -> (start, resource).
    calls: BTreeMap<Name, (Duration, Name)>,
    /// Finished lock calls: (resource, start, end).
    call_spans: Vec<(Name, Duration, Duration)>,
}

/// The fields of an `acquired` event the checker keeps.
struct Acquired<'e> {
    acq: u64,
    token: &'e str,
    valid_until: Duration,
    fence: Option<u64>,
}

impl Checker {
    fn id(&mut self, name: &str) -> Name {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as Name;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), i);
        i
    }

    fn name(&self, id: Name) -> &str {
        &self.names[id as usize]
    }

    fn acq_id(&self, k: Key) -> (String, u64) {
        (self.name(k.0).to_string(), k.1)
    }

    /// Takes the next event. The simulation records events in time order:
    /// an event earlier than the last one fed is a bug of the harness, and
    /// panics (exit 70) rather than turn into a verdict.
    pub fn feed(&mut self, e: &redlock_history::Event) {
        assert!(
            e.time >= self.now,
            "checker: an event at {:?} ({} {}) came after one at {:?}: the history is out of time order (a bug in redlock-sim)",
            e.time,
            e.host,
            e.kind.name(),
            self.now
        );
        let t = e.time;
        if t > self.now {
            self.settle();
            self.now = t;
        }
        let host = self.id(&e.host);
        match &e.kind {
            EventKind::LockCall { resource, .. } => {
                self.attempts += 1;
                let r = self.id(resource);
                if let Some((prev, r)) = self.calls.insert(host, (t, r)) {
                    // A call left open (not expected): it ends here.
                    self.call_spans.push((r, prev, t));
                }
            }
            EventKind::Acquired {
                acq,
                resource,
                token,
                valid_until,
                fence,
                ..
            } => {
                let acquired = Acquired {
                    acq: *acq,
                    token,
                    valid_until: *valid_until,
                    fence: *fence,
                };
                self.acquired(e, host, resource, acquired);
            }
            EventKind::LockFailed { .. } => {
                if let Some((start, r)) = self.calls.remove(&host) {
                    self.call_spans.push((r, start, t));
                }
            }
            EventKind::Extended {
                acq, valid_until, ..
            } => {
                if let Some(a) = self.acc_mut((host, *acq)) {
                    assert!(
                        t >= a.start,
                        "checker: {} extended acq={acq} at {t:?}, before its acquisition at {:?}",
                        e.host,
                        a.start
                    );
                    a.valid_until = *valid_until;
                }
            }
            // A client whose clock changes rate mid-hold reaches the end of
            // its validity (on its own clock) sooner or later in global time.
            EventKind::Fault(FaultEvent::ClockRate { host, rate, from }) => {
                self.clock_rate(t, host, *rate, *from);
            }
            EventKind::ReleaseStart { acq } => {
                if let Some(a) = self.acc_mut((host, *acq)) {
                    assert!(
                        t >= a.start,
                        "checker: {} released acq={acq} at {t:?}, before its acquisition at {:?}",
                        e.host,
                        a.start
                    );
                    a.release.get_or_insert(t);
                }
            }
            // A re-entry (and its release) is no new acquisition and changes
            // no hold; a failed one ends the hold like a failed validity check.
            EventKind::Lost { acq, .. }
            | EventKind::ValidityExpired { acq }
            | EventKind::ReentryFailed { acq, .. } => {
                if let Some(a) = self.acc_mut((host, *acq)) {
                    assert!(
                        t >= a.start,
                        "checker: {} lost acq={acq} at {t:?}, before its acquisition at {:?}",
                        e.host,
                        a.start
                    );
                    a.lost.get_or_insert(t);
                }
            }
            EventKind::WriteSent { acq, seq } => {
                self.sent.insert((host, *acq, *seq), t);
            }
            EventKind::WriteRejected {
                client, acq, seq, ..
            } => {
                self.rejected_writes += 1;
                let c = self.id(client);
                self.sent.remove(&(c, *acq, *seq));
            }
            EventKind::WriteApplied {
                client,
                acq,
                seq,
                fence,
                resource,
            } => {
                let w = AppliedWrite {
                    time: t,
                    seq: *seq,
                    fence: *fence,
                };
                self.write_applied(client, *acq, resource, w);
            }
            _ => {}
        }
    }

    /// An `acquired` event: the call ends, the acquisition starts its hold.
    fn acquired(&mut self, e: &redlock_history::Event, host: Name, resource: &str, a: Acquired) {
        let (t, acq) = (e.time, a.acq);
        self.acquisitions += 1;
        if let Some((start, r)) = self.calls.remove(&host) {
            self.latencies.push(millis_f64(t.saturating_sub(start)));
            self.call_spans.push((r, start, t));
        }
        let resource = self.id(resource);
        // Acquisition ids are the client's count of its acquisitions:
        // a repeated one is a bug of the harness, never a verdict.
        assert!(
            self.find((host, acq)).is_none(),
            "checker: {} acquired twice with acq={acq} (a bug in redlock-sim)",
            e.host
        );
        let i = self.accs.len();
        let mine = self.index.entry(host).or_default();
        if acq == mine.len() as u64 + 1 {
            mine.push(i);
        } else {
            self.odd.insert((host, acq), i);
        }
        self.latest.insert(resource, i);
        let starts = self.starts.entry(resource).or_default();
        // `settle` finds the first later acquisition by binary search.
        assert!(
            starts.last().is_none_or(|last| *last <= t),
            "checker: an acquisition of {resource} at {t:?} after one at {:?}",
            starts.last()
        );
        starts.push(t);
        self.accs.push(Acquisition {
            client: host,
            acq,
            resource,
            token: a.token.to_string(),
            start: t,
            valid_until: a.valid_until,
            fence: a.fence,
            release: None,
            lost: None,
            written: None,
        });
        assert_eq!(
            self.find((host, acq)),
            Some(i),
            "checker: {} acq={acq} not found where it was just put",
            e.host
        );
    }

    /// A `write_applied` event: checked for interleaving now, for
    /// staleness once no acquisition can start at its instant any more.
    fn write_applied(&mut self, client: &str, acq: u64, resource: &str, w: AppliedWrite) {
        let (c, resource) = (self.id(client), self.id(resource));
        let sent = self.sent.remove(&(c, acq, w.seq));
        let writer = (c, acq);
        self.interleave(writer, resource, w);
        self.pending.push(Pending {
            writer,
            resource,
            w,
            sent,
        });
    }

    /// The index in `accs` of acquisition `k`.
    fn find(&self, k: Key) -> Option<usize> {
        let seq = self
            .index
            .get(&k.0)
            .and_then(|v| v.get(usize::try_from(k.1).ok()?.checked_sub(1)?));
        seq.copied().or_else(|| self.odd.get(&k).copied())
    }

    fn acc_mut(&mut self, k: Key) -> Option<&mut Acquisition> {
        let i = self.find(k)?;
        self.accs.get_mut(i)
    }

    fn written_mut(&mut self, k: Key) -> Option<&mut Written> {
        match self.find(k) {
            Some(i) => self.accs[i].written.as_mut(),
            None => self.unknown_writes.get_mut(&k),
        }
    }

    fn written(&self, k: Key) -> Option<&Written> {
        match self.find(k) {
            Some(i) => self.accs[i].written.as_ref(),
            None => self.unknown_writes.get(&k),
        }
    }

    fn clock_rate(&mut self, t: Duration, who: &str, rate: f64, from: f64) {
        if !(rate > 0.0 && from > 0.0) {
            return;
        }
        let Some(&who) = self.ids.get(who) else {
            return;
        };
        for a in self
            .accs
            .iter_mut()
            .filter(|a| a.client == who && a.valid_until > t)
        {
            let rest = (a.valid_until - t).as_secs_f64() * from / rate;
            a.valid_until = t + Duration::from_secs_f64(rest.min(1e9));
        }
    }

    /// The write interleavings this applied write completes: every
    /// acquisition of another client whose first write came after the
    /// writer's previous write (A, B, A).
    fn interleave(&mut self, writer: Key, resource: Name, w: AppliedWrite) {
        let p = self.position;
        self.position += 1;
        match self.written_mut(writer) {
            Some(mine) if mine.resource == resource => {
                let (q, before) = mine.last;
                mine.last = (p, w);
                let firsts = self.firsts.get(&resource).map_or(&[][..], |v| v);
                let lo = firsts.partition_point(|(pos, _)| *pos <= q);
                let hi = firsts.partition_point(|(pos, _)| *pos < p);
                let mut found = Vec::new();
                for &(_, other) in &firsts[lo..hi] {
                    if other.0 != writer.0 && !self.pairs.contains(&(writer, other)) {
                        if let Some(b) = self.written(other) {
                            found.push((other, b.first.1));
                        }
                    }
                }
                for (other, _) in &found {
                    self.pairs.insert((writer, *other));
                }
                for (other, b) in found {
                    // B's first write came between A's two, in the store's
                    // order, which is the order of time.
                    assert!(
                        before.time <= b.time && b.time <= w.time,
                        "checker: writes interleaved at {:?}, {:?}, {:?}, out of time order",
                        before.time,
                        b.time,
                        w.time
                    );
                    self.interleavings.push(Interleaving {
                        resource: self.name(resource).to_string(),
                        first: self.acq_id(writer),
                        second: self.acq_id(other),
                        times: [before.time, b.time, w.time],
                        seqs: [before.seq, b.seq, w.seq],
                        fences: [before.fence, b.fence, w.fence],
                    });
                }
            }
            Some(_) => {} // one acquisition writing two resources: not ours
            None => {
                let first = Written {
                    resource,
                    first: (p, w),
                    last: (p, w),
                };
                match self.find(writer) {
                    Some(i) => self.accs[i].written = Some(first),
                    None => {
                        self.unknown_writes.insert(writer, first);
                    }
                }
                self.firsts.entry(resource).or_default().push((p, writer));
            }
        }
    }

    /// Decides the writes applied at the present instant, now that every
    /// acquisition of that instant is known.
    fn settle(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            assert_eq!(
                p.w.time, self.now,
                "checker: a write applied at {:?} decided at {:?}, not at its own instant",
                p.w.time, self.now
            );
            let (Some(mine), Some(&latest)) = (self.find(p.writer), self.latest.get(&p.resource))
            else {
                continue;
            };
            let (a, b) = (&self.accs[mine], &self.accs[latest]);
            if b.start > a.start && b.start <= p.w.time {
                let starts = &self.starts[&p.resource];
                let superseded_at = starts[starts.partition_point(|s| *s <= a.start)];
                assert!(
                    a.start < superseded_at && superseded_at <= b.start,
                    "checker: a write of an acquisition at {:?} superseded at {superseded_at:?}, \
                     not after it and by the one it landed in at {:?}",
                    a.start,
                    b.start
                );
                let w = StaleWrite {
                    resource: self.name(p.resource).to_string(),
                    writer: self.acq_id(p.writer),
                    seq: p.w.seq,
                    fence: p.w.fence,
                    acquired: a.start,
                    sent: p.sent,
                    applied: p.w.time,
                    landed_in: self.acq_id((b.client, b.acq)),
                    landed_in_start: b.start,
                    superseded_at,
                    kind: StaleKind::InFlight,
                };
                self.stale.push((mine, w));
            }
        }
    }

    /// The verdict and figures of everything fed.
    pub fn finish(mut self) -> CheckResult {
        self.settle();
        let run_end = self.now;
        for (_, (start, r)) in std::mem::take(&mut self.calls) {
            self.call_spans.push((r, start, run_end.max(start)));
        }
        let names = std::mem::take(&mut self.names);
        // One hold per `acquired` fed, and a latency per call that ended
        // in one.
        assert_eq!(
            self.accs.len() as u64,
            self.acquisitions,
            "checker: {} holds for {} acquisitions",
            self.accs.len(),
            self.acquisitions
        );
        assert!(
            self.latencies.len() as u64 <= self.acquisitions,
            "checker: {} lock-call latencies for {} acquisitions",
            self.latencies.len(),
            self.acquisitions
        );
        let holds: Vec<Hold> = std::mem::take(&mut self.accs)
            .into_iter()
            .map(|a| hold_of(a, run_end, &names))
            .collect();
        let stale_writes = self
            .stale
            .into_iter()
            .map(|(i, mut w)| {
                let sent = w.sent.unwrap_or(w.applied);
                w.kind = StaleKind::of(sent, w.superseded_at, holds[i].end);
                w
            })
            .collect();
        let overlaps = overlaps(&holds);
        let unavailable = unavailable(&self.call_spans, &holds, &names);
        self.latencies.sort_by(f64::total_cmp);
        let liveness = Liveness {
            attempts: self.attempts,
            acquisitions: self.acquisitions,
            acquire_p50_ms: percentile(&self.latencies, 0.5),
            acquire_p99_ms: percentile(&self.latencies, 0.99),
            unavailable_ms: millis_f64(unavailable),
        };
        assert!(
            liveness.acquire_p50_ms <= liveness.acquire_p99_ms,
            "checker: a median acquisition of {} ms above the 99th percentile, {} ms",
            liveness.acquire_p50_ms,
            liveness.acquire_p99_ms
        );
        let mut interleavings = self.interleavings;
        interleavings
            .sort_by(|x, y| (x.times, &x.first, &x.second).cmp(&(y.times, &y.first, &y.second)));
        let mut result = CheckResult {
            holds,
            overlaps,
            interleavings,
            stale_writes,
            rejected_writes: self.rejected_writes,
            liveness,
            unprotected_writes: None,
            verdict: Verdict::Safe,
            inconclusive: Vec::new(),
        };
        result.verdict = result.verdict_of_violations();
        result
    }
}

/// An acquisition's hold, the history having ended at `run_end`.
fn hold_of(a: Acquisition, run_end: Duration, names: &[String]) -> Hold {
    // Every end the history gives is at or after the acquisition (events
    // come in time order); only `valid_until`, which the client computes,
    // may fall before it, and the hold then has no length.
    for t in [Some(run_end), a.release, a.lost].into_iter().flatten() {
        assert!(
            t >= a.start,
            "checker: {}'s hold acq={} ends at {t:?}, before its start at {:?}",
            names[a.client as usize],
            a.acq,
            a.start
        );
    }
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
        client: names[a.client as usize].clone(),
        acq: a.acq,
        resource: names[a.resource as usize].clone(),
        token: a.token,
        start: a.start,
        end: end.max(a.start),
        end_reason,
        fence: a.fence,
    }
}

/// Time during which some client was inside a lock call on a resource
/// while no hold of that resource was active, summed over resources.
fn unavailable(
    call_spans: &[(Name, Duration, Duration)],
    holds: &[Hold],
    names: &[String],
) -> Duration {
    // Per resource: (time, change in open calls, change in active holds).
    let mut changes: BTreeMap<&str, Vec<(Duration, i64, i64)>> = BTreeMap::new();
    for (r, start, end) in call_spans {
        assert!(
            start <= end,
            "checker: a lock call on {} ending at {end:?}, before its start at {start:?}",
            names[*r as usize]
        );
        let v = changes.entry(names[*r as usize].as_str()).or_default();
        v.push((*start, 1, 0));
        v.push((*end, -1, 0));
    }
    for h in holds {
        if h.end > h.start {
            let v = changes.entry(h.resource.as_str()).or_default();
            v.push((h.start, 0, 1));
            v.push((h.end, 0, -1));
        }
    }
    let mut unavailable = Duration::ZERO;
    for changes in changes.values_mut() {
        changes.sort_by_key(|c| c.0);
        let (mut calls, mut active) = (0i64, 0i64);
        let mut i = 0;
        while i < changes.len() {
            let t = changes[i].0;
            while i < changes.len() && changes[i].0 == t {
                calls += changes[i].1;
                active += changes[i].2;
                i += 1;
            }
            // Every span starts no later than it ends: once an instant is
            // counted, no count is below zero.
            assert!(
                calls >= 0 && active >= 0,
                "checker: {calls} lock calls and {active} holds open at {t:?}"
            );
            if let Some(next) = changes.get(i) {
                if calls > 0 && active <= 0 {
                    unavailable += next.0 - t;
                }
            }
        }
        assert!(
            calls == 0 && active == 0,
            "checker: {calls} lock calls and {active} holds still open after the last change"
        );
    }
    unavailable
}

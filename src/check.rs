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
//!     `valid_until` of the latest `extended` event of the same acquisition,
//!   - a `lost` or `validity_expired` event of the acquisition,
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

use std::collections::{BTreeMap, BTreeSet};
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
    /// Stale writes, in the order the store applied them.
    pub stale_writes: Vec<StaleWrite>,
    /// Writes the store refused because their fencing token was stale
    /// (`write_rejected` events).
    pub rejected_writes: u64,
    /// Availability figures.
    pub liveness: Liveness,
    /// `Violation` when `overlaps`, `stale_writes` or `interleavings` is
    /// not empty.
    pub verdict: Verdict,
}

/// Runs every checker over `history` (whose events are in time order, as
/// [`crate::history::Recorder::finish`] gives them).
pub fn check(history: &History) -> CheckResult {
    let mut c = Checker::default();
    for e in &history.events {
        c.feed(e);
    }
    c.finish()
}

/// A client or resource name, interned: an index into `Checker::names`.
type Name = u32;
/// An acquisition: `(client, acq)` with the client interned.
type Key = (Name, u64);

/// One acquisition as the events tell it so far.
struct Acc {
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
struct W {
    time: Duration,
    seq: u32,
    fence: Option<u64>,
}

/// The applied writes of one acquisition: its first and its latest, with
/// their positions in the store's apply order.
struct Written {
    resource: Name,
    first: (u64, W),
    last: (u64, W),
}

/// A write applied at the present instant: whether it is stale is decided
/// once every acquisition of that instant is known.
struct Pending {
    writer: Key,
    resource: Name,
    w: W,
    sent: Option<Duration>,
}

/// The online checker: feed it a run's events in time order, then
/// [`Checker::finish`]. Names are interned, so what it keeps per
/// acquisition and per lock call is a few words.
#[derive(Default)]
pub struct Checker {
    names: Vec<String>,
    ids: BTreeMap<String, Name>,
    accs: Vec<Acc>,
    /// Per client, the index in `accs` of its acquisition `n` at `n - 1`
    /// (clients number them 1, 2, 3, ...).
    index: BTreeMap<Name, Vec<usize>>,
    /// Acquisitions out of that order (a hand-written history), and the
    /// writes of acquisitions the history never showed.
    odd: BTreeMap<Key, usize>,
    unknown_writes: BTreeMap<Key, Written>,
    /// Resource -> index in `accs` of its latest acquisition.
    latest: BTreeMap<Name, usize>,
    /// Writes sent and not yet applied or refused: `(client, acq, seq)` ->
    /// when sent.
    sent: BTreeMap<(Name, u64, u32), Duration>,
    /// The time of the latest event fed.
    now: Duration,
    pending: Vec<Pending>,
    stale: Vec<StaleWrite>,
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

    /// Takes the next event (in time order; a time earlier than the last is
    /// treated as the last).
    pub fn feed(&mut self, e: &crate::history::Event) {
        let t = e.time.max(self.now);
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
                self.acquisitions += 1;
                if let Some((start, r)) = self.calls.remove(&host) {
                    self.latencies.push(ms(t.saturating_sub(start)));
                    self.call_spans.push((r, start, t));
                }
                let resource = self.id(resource);
                // A repeated (client, acq) would be a recorder bug: keep the first.
                if self.find((host, *acq)).is_none() {
                    let i = self.accs.len();
                    let mine = self.index.entry(host).or_default();
                    if *acq == mine.len() as u64 + 1 {
                        mine.push(i);
                    } else {
                        self.odd.insert((host, *acq), i);
                    }
                    self.latest.insert(resource, i);
                    self.accs.push(Acc {
                        client: host,
                        acq: *acq,
                        resource,
                        token: token.clone(),
                        start: t,
                        valid_until: *valid_until,
                        fence: *fence,
                        release: None,
                        lost: None,
                        written: None,
                    });
                }
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
                    a.valid_until = *valid_until;
                }
            }
            // A client whose clock changes rate mid-hold reaches the end of
            // its validity (on its own clock) sooner or later in global time.
            EventKind::Fault { what, detail } if what == "clock-rate" => {
                self.clock_rate(t, detail);
            }
            EventKind::ReleaseStart { acq } => {
                if let Some(a) = self.acc_mut((host, *acq)) {
                    a.release.get_or_insert(t);
                }
            }
            EventKind::Lost { acq, .. } | EventKind::ValidityExpired { acq } => {
                if let Some(a) = self.acc_mut((host, *acq)) {
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
                let w = W {
                    time: t,
                    seq: *seq,
                    fence: *fence,
                };
                let (c, resource) = (self.id(client), self.id(resource));
                let sent = self.sent.remove(&(c, *acq, *seq));
                let writer = (c, *acq);
                self.interleave(writer, resource, w);
                self.pending.push(Pending {
                    writer,
                    resource,
                    w,
                    sent,
                });
            }
            _ => {}
        }
    }

    /// The index in `accs` of acquisition `k`.
    fn find(&self, k: Key) -> Option<usize> {
        let seq = self
            .index
            .get(&k.0)
            .and_then(|v| v.get(usize::try_from(k.1).ok()?.checked_sub(1)?));
        seq.copied().or_else(|| self.odd.get(&k).copied())
    }

    fn acc_mut(&mut self, k: Key) -> Option<&mut Acc> {
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

    fn clock_rate(&mut self, t: Duration, detail: &str) {
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
        let (Some(who), Some(rate), Some(from)) = (field("host"), num("rate"), num("from")) else {
            return;
        };
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
    fn interleave(&mut self, writer: Key, resource: Name, w: W) {
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
            let (Some(mine), Some(&latest)) = (self.find(p.writer), self.latest.get(&p.resource))
            else {
                continue;
            };
            let (a, b) = (&self.accs[mine], &self.accs[latest]);
            if b.start > a.start && b.start <= p.w.time {
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
                };
                self.stale.push(w);
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
        let holds: Vec<Hold> = std::mem::take(&mut self.accs)
            .into_iter()
            .map(|a| hold_of(a, run_end, &names))
            .collect();
        let overlaps = overlaps(&holds);
        let unavailable = unavailable(&self.call_spans, &holds, &names);
        self.latencies.sort_by(f64::total_cmp);
        let liveness = Liveness {
            attempts: self.attempts,
            acquisitions: self.acquisitions,
            acquire_p50_ms: nearest_rank(&self.latencies, 50.0),
            acquire_p99_ms: nearest_rank(&self.latencies, 99.0),
            unavailable_ms: ms(unavailable),
        };
        let mut interleavings = self.interleavings;
        interleavings
            .sort_by(|x, y| (x.times, &x.first, &x.second).cmp(&(y.times, &y.first, &y.second)));
        let stale_writes = self.stale;
        let verdict = if overlaps.is_empty() && stale_writes.is_empty() && interleavings.is_empty()
        {
            Verdict::Safe
        } else {
            Verdict::Violation
        };
        CheckResult {
            holds,
            overlaps,
            interleavings,
            stale_writes,
            rejected_writes: self.rejected_writes,
            liveness,
            verdict,
        }
    }
}

/// An acquisition's hold, the history having ended at `run_end`.
fn hold_of(a: Acc, run_end: Duration, names: &[String]) -> Hold {
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
            if let Some(next) = changes.get(i) {
                if calls > 0 && active <= 0 {
                    unavailable += next.0 - t;
                }
            }
        }
    }
    unavailable
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

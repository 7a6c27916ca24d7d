//! The history of one run: every event with its simulated global time and
//! host, in the order it happened.
//!
//! Hosts record into a shared [`Recorder`]; the checkers (`redlock_check`)
//! and the reports read the finished [`History`]. An event's CSV row is
//! `time_ms,host,event,detail` and the run's `trace` is a 64-bit FNV-1a hash
//! of all rows, so the same file and seed give the same trace on any machine.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod fault;
pub mod keys;
pub mod ownership;
pub use fault::{sides_text, FaultEvent, SkipReason, SkippedFault};

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    // --- clients ---
    /// A lock call on `resource` starts.
    LockCall { call: u64, resource: String },
    /// The lock call returned success.
    Acquired {
        acq: u64,
        /// The lock's key.
        resource: String,
        token: String,
        /// Validity computed by the client.
        validity: Duration,
        /// Global time at which the client's monotonic clock reaches the end
        /// of the validity (at the client's clock rate when it acquired).
        valid_until: Duration,
        nodes: usize,
        /// The fencing token, when fencing is on.
        fence: Option<u64>,
    },
    /// The lock call failed.
    LockFailed { call: u64, reason: String },
    /// The client sends write `seq` of acquisition `acq` to the store.
    WriteSent { acq: u64, seq: u32 },
    /// The client gave up on write `seq` of acquisition `acq` while its
    /// connection to the store was still being opened: it never left.
    WriteAbandoned { acq: u64, seq: u32 },
    /// Before a later write, the client found its validity over and stops.
    ValidityExpired { acq: u64 },
    /// The watchdog extended the lock; the hold now ends at `valid_until`.
    Extended {
        acq: u64,
        validity: Duration,
        valid_until: Duration,
    },
    /// The watchdog lost the lock.
    Lost { acq: u64, reason: String },
    /// The reentrant lock of acquisition `acq` was re-entered: it is now
    /// held `depth` deep (2 for the first re-entry), on `nodes` nodes. Not a
    /// new acquisition: the hold is `acq`'s.
    Reentered { acq: u64, depth: u32, nodes: usize },
    /// One level of a re-entered lock was released: from `depth` down to
    /// `depth` − 1; the count went down on `nodes` nodes.
    ReentryReleased { acq: u64, depth: u32, nodes: usize },
    /// A re-entry to `depth` failed (the lock was lost, or too few nodes
    /// answered): the hold ends, as after a failed validity check.
    ReentryFailed {
        acq: u64,
        depth: u32,
        reason: String,
    },
    /// The client starts releasing.
    ReleaseStart { acq: u64 },
    /// Release finished; the key was deleted on `nodes` nodes.
    Released { acq: u64, nodes: usize },
    // --- the protected store ---
    /// The store applied a write.
    WriteApplied {
        client: String,
        acq: u64,
        seq: u32,
        fence: Option<u64>,
        resource: String,
    },
    /// The store refused a write whose fencing token was stale.
    WriteRejected {
        client: String,
        acq: u64,
        seq: u32,
        fence: u64,
        highest: u64,
        resource: String,
    },
    // --- nodes: a lock key's marks ([`keys`]) ---
    /// A node made a mark of the lock key: a string's value (replacing the
    /// one before), a hash's field or a sorted set's member; `expires_at`
    /// is the key's expiry, or a member's score, in ms on the node's clock.
    KeySet {
        key: String,
        shape: keys::Shape,
        token: String,
        expires_at: Option<i64>,
        /// The client whose command made it (the lab knows it; the
        /// simulation leaves it out).
        by: Option<String>,
    },
    /// A node moved the lock key's expiry (`mark: None`), or a member's
    /// score.
    KeyExtended {
        key: String,
        mark: Option<(keys::Shape, String)>,
        expires_at: Option<i64>,
        by: Option<String>,
    },
    /// A node deleted the lock key (`mark: None`: all of it) or one of its
    /// marks, as a command asked (a release, a flush); `by`: the client
    /// whose command did (the lab only).
    KeyRemoved {
        key: String,
        mark: Option<(keys::Shape, String)>,
        by: Option<String>,
    },
    /// The lock key's time ran out on its node's clock (`mark: None`), or a
    /// member's score passed: whoever's command made the node notice, no
    /// one removed it.
    KeyExpired {
        key: String,
        mark: Option<(keys::Shape, String)>,
        expires_at: Option<i64>,
    },
    /// A node started (at the beginning or after a restart) with `keys` keys.
    NodeUp { keys: usize },
    // --- faults and the sentinel ---
    /// A fault was applied.
    Fault(FaultEvent),
    /// A fault that could not do anything (crashing a node that is down,
    /// restarting one that is up, pausing one that is down) and was
    /// skipped; `reason` says why.
    FaultSkipped {
        fault: SkippedFault,
        reason: SkipReason,
    },
    /// The sentinel promoted `new_master`.
    Failover {
        old_master: String,
        new_master: String,
    },
    /// The run's end: no new lock attempt starts after this.
    End,
    // --- the lab: what its drivers said, and what became of them ---
    /// A driver said its library keeps the lock on `resource` under `key`;
    /// `by_client`: its token differs from master to master, so a client
    /// owns the lock on a majority holding keys it set, whatever their
    /// tokens (`LOCKKEY ... BYCLIENT`).
    LockKey {
        resource: String,
        key: String,
        by_client: bool,
    },
    /// A driver said it is ready (`READY`): connected and warmed up.
    Ready,
    /// A server (`n1`, `sentinel`) answered one of this client's commands
    /// with an error that says it could not run it (an unknown command, a
    /// script that failed): the run did not test the lock.
    ServerError {
        server: String,
        command: String,
        error: String,
    },
    /// A driver sent the store a command it could not take.
    StoreError { error: String },
    /// A client process ended (`status` as the system gives it), before
    /// the lab stopped it.
    ClientExited { status: String },
}

impl EventKind {
    /// The `event` column of `history.csv`.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::LockCall { .. } => "lock_call",
            EventKind::Acquired { .. } => "acquired",
            EventKind::LockFailed { .. } => "lock_failed",
            EventKind::WriteSent { .. } => "write_sent",
            EventKind::WriteAbandoned { .. } => "write_abandoned",
            EventKind::ValidityExpired { .. } => "validity_expired",
            EventKind::Extended { .. } => "extended",
            EventKind::Lost { .. } => "lost",
            EventKind::Reentered { .. } => "reentered",
            EventKind::ReentryReleased { .. } => "reentry_released",
            EventKind::ReentryFailed { .. } => "reentry_failed",
            EventKind::ReleaseStart { .. } => "release_start",
            EventKind::Released { .. } => "released",
            EventKind::WriteApplied { .. } => "write_applied",
            EventKind::WriteRejected { .. } => "write_rejected",
            EventKind::KeySet { .. } => "key_set",
            EventKind::KeyExtended { .. } => "key_extended",
            EventKind::KeyRemoved { .. } => "key_removed",
            EventKind::KeyExpired { .. } => "key_expired",
            EventKind::NodeUp { .. } => "node_up",
            EventKind::Fault(_) => "fault",
            EventKind::FaultSkipped { .. } => "fault_skipped",
            EventKind::Failover { .. } => "failover",
            EventKind::End => "end",
            EventKind::LockKey { .. } => "lock_key",
            EventKind::Ready => "ready",
            EventKind::ServerError { .. } => "server_error",
            EventKind::StoreError { .. } => "store_error",
            EventKind::ClientExited { .. } => "client_exited",
        }
    }

    /// The `detail` column: `key=value` pairs separated by spaces.
    pub(crate) fn detail(&self) -> String {
        let ms = |d: &Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
        let opt = |o: &Option<u64>| o.map_or("-".to_string(), |v| v.to_string());
        match self {
            EventKind::LockCall { call, resource } => format!("call={call} resource={resource}"),
            EventKind::Acquired {
                acq,
                resource,
                token,
                validity,
                valid_until,
                nodes,
                fence,
            } => format!(
                "acq={acq} resource={resource} token={token} validity_ms={} valid_until_ms={} nodes={nodes} fence={}",
                ms(validity),
                ms(valid_until),
                opt(fence)
            ),
            EventKind::LockFailed { call, reason } => format!("call={call} reason={reason}"),
            EventKind::WriteSent { acq, seq } | EventKind::WriteAbandoned { acq, seq } => {
                format!("acq={acq} seq={seq}")
            }
            EventKind::ValidityExpired { acq } => format!("acq={acq}"),
            EventKind::Extended {
                acq,
                validity,
                valid_until,
            } => {
                format!(
                    "acq={acq} validity_ms={} valid_until_ms={}",
                    ms(validity),
                    ms(valid_until)
                )
            }
            EventKind::Lost { acq, reason } => format!("acq={acq} reason={reason}"),
            EventKind::Reentered { acq, depth, nodes }
            | EventKind::ReentryReleased { acq, depth, nodes } => {
                format!("acq={acq} depth={depth} nodes={nodes}")
            }
            EventKind::ReentryFailed { acq, depth, reason } => {
                format!("acq={acq} depth={depth} reason={reason}")
            }
            EventKind::ReleaseStart { acq } => format!("acq={acq}"),
            EventKind::Released { acq, nodes } => format!("acq={acq} nodes={nodes}"),
            EventKind::WriteApplied {
                client,
                acq,
                seq,
                fence,
                resource,
            } => {
                format!(
                    "client={client} acq={acq} seq={seq} fence={} resource={resource}",
                    opt(fence)
                )
            }
            EventKind::WriteRejected {
                client,
                acq,
                seq,
                fence,
                highest,
                resource,
            } => {
                format!("client={client} acq={acq} seq={seq} fence={fence} highest={highest} resource={resource}")
            }
            EventKind::KeySet {
                key,
                shape,
                token,
                expires_at,
                by,
            } => format!(
                "key={key} {}{}",
                mark_text(*shape, token, *expires_at),
                by_text(by)
            ),
            EventKind::KeyExtended {
                key,
                mark,
                expires_at,
                by,
            } => match mark {
                Some((shape, m)) => {
                    format!("key={key} {}{}", mark_text(*shape, m, *expires_at), by_text(by))
                }
                None => format!("key={key} expires_at={}{}", at_text(*expires_at), by_text(by)),
            },
            EventKind::KeyRemoved { key, mark, by } => match mark {
                Some((shape, m)) => format!("key={key} {}={m}{}", shape.mark_name(), by_text(by)),
                None => format!("key={key}{}", by_text(by)),
            },
            EventKind::KeyExpired {
                key,
                mark,
                expires_at,
            } => match mark {
                Some((shape, m)) => format!("key={key} {}", mark_text(*shape, m, *expires_at)),
                None => format!("key={key} expires_at={}", at_text(*expires_at)),
            },
            EventKind::NodeUp { keys } => format!("keys={keys}"),
            EventKind::Fault(fault) => fault.to_string(),
            EventKind::FaultSkipped { fault, reason } => format!("{fault} reason={reason}"),
            EventKind::Failover {
                old_master,
                new_master,
            } => format!("old={old_master} new={new_master}"),
            EventKind::End | EventKind::Ready => String::new(),
            EventKind::LockKey {
                resource,
                key,
                by_client,
            } => {
                let by = if *by_client { " owner=by_client" } else { "" };
                format!("resource={resource} key={key}{by}")
            }
            EventKind::StoreError { error } => format!("error={error}"),
            EventKind::ServerError {
                server,
                command,
                error,
            } => format!("server={server} command={command} error={error}"),
            EventKind::ClientExited { status } => format!("status={status}"),
        }
    }
}

/// ` by=<client>` when the client that made a key's change is known.
fn by_text(by: &Option<String>) -> String {
    by.as_ref().map_or(String::new(), |c| format!(" by={c}"))
}

/// A time in ms on a node's clock, `-` for none.
fn at_text(at: Option<i64>) -> String {
    at.map_or("-".to_string(), |t| t.to_string())
}

/// A mark in `detail`: `token=t expires_at=…` (a string), `field=f
/// expires_at=…` (a hash), `member=m score=…` (a sorted set).
fn mark_text(shape: keys::Shape, mark: &str, at: Option<i64>) -> String {
    let when = match shape {
        keys::Shape::ZSet => "score",
        _ => "expires_at",
    };
    format!("{}={mark} {when}={}", shape.mark_name(), at_text(at))
}

/// One event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Simulated global time since the start of the run.
    pub time: Duration,
    pub host: String,
    pub kind: EventKind,
}

impl Event {
    /// `time_ms` with 3 decimals, as in `history.csv`.
    pub(crate) fn time_ms(&self) -> String {
        format!("{:.3}", self.time.as_secs_f64() * 1e3)
    }

    /// The CSV fields: time_ms, host, event, detail.
    pub fn row(&self) -> [String; 4] {
        [
            self.time_ms(),
            self.host.clone(),
            self.kind.name().to_string(),
            self.kind.detail(),
        ]
    }
}

/// A finished history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub events: Vec<Event>,
}

impl History {
    /// 64-bit FNV-1a over every row (fields joined by `,`, rows ended by
    /// `\n`), as 16 hex digits: [`Trace`] fed every event.
    pub fn trace(&self) -> String {
        let mut t = Trace::default();
        for e in &self.events {
            t.add(e);
        }
        t.hex()
    }

    /// Events of one host.
    pub fn of<'a>(&'a self, host: &'a str) -> impl Iterator<Item = &'a Event> + 'a {
        self.events.iter().filter(move |e| e.host == host)
    }
}

/// The run's `trace`, computed as events go by: 64-bit FNV-1a over every
/// row of `history.csv` (fields joined by `,`, rows ended by `\n`).
#[derive(Clone, Debug)]
pub struct Trace {
    hash: u64,
    line: String,
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            hash: 0xcbf2_9ce4_8422_2325,
            line: String::new(),
        }
    }
}

impl Trace {
    pub fn add(&mut self, e: &Event) {
        self.line.clear();
        let [t, host, ev, detail] = e.row();
        let _ = writeln!(self.line, "{t},{host},{ev},{detail}");
        for b in self.line.bytes() {
            self.hash ^= b as u64;
            self.hash = self.hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.hash)
    }
}

/// Where the recorder hands finished events, in time order.
pub type Sink = Box<dyn FnMut(Event) + Send>;

struct Inner {
    /// Events not yet handed on (recent: a later record may still come
    /// before them in time).
    buffer: Vec<Event>,
    /// Every event is handed on at or after this time: earlier ones left.
    flushed_to: Duration,
    /// The time of the last event handed on.
    handed: Duration,
    /// Per client, its latest lock call and acquisition (their ids).
    ids: BTreeMap<String, Ids>,
    /// The nodes down (crashed and not yet restarted), as recorded.
    down: BTreeSet<String>,
    /// When the run's `end` was recorded.
    ended: Option<Duration>,
    sink: Sink,
}

impl Inner {
    /// Checks what `host` records at `time` against the run so far: a node
    /// restarted after its crash and silent while down, one `end`.
    fn follow(&mut self, time: Duration, host: &str, kind: &EventKind) {
        assert!(
            !self.down.contains(host),
            "history: {host}, down, recorded {}",
            kind.name()
        );
        match kind {
            EventKind::Fault(FaultEvent::Crash { host: node, .. }) => {
                assert!(
                    self.down.insert(node.clone()),
                    "history: a crash of {node}, which was down"
                );
            }
            EventKind::Fault(FaultEvent::Restart { host: node }) => {
                assert!(
                    self.down.remove(node),
                    "history: a restart of {node}, which was up"
                );
            }
            EventKind::End => {
                assert!(
                    self.ended.is_none(),
                    "history: the run's end recorded at {time:?} and before, at {:?}",
                    self.ended
                );
                self.ended = Some(time);
            }
            _ => {}
        }
        Ids::follow(&mut self.ids, host, kind);
    }
}

/// A client's latest `call` and `acq`: a client numbers its lock calls
/// and its acquisitions 1, 2, 3, ..., holds one at a time (released once
/// before the next), and an event of an acquisition is of its latest (the
/// store's, of one it made).
#[derive(Clone, Copy, Debug, Default)]
struct Ids {
    call: u64,
    acq: u64,
    /// Its latest acquisition released (`released`).
    released: u64,
    /// The latest write of its latest acquisition, sent or abandoned.
    seq: u32,
}

impl Ids {
    /// Checks the ids of `kind`, recorded by `host`, against those of
    /// the clients so far, and takes its own.
    fn follow(ids: &mut BTreeMap<String, Ids>, host: &str, kind: &EventKind) {
        let mine = |ids: &BTreeMap<String, Ids>| ids.get(host).copied().unwrap_or_default();
        match kind {
            EventKind::LockCall { call, .. } => {
                let before = mine(ids);
                assert_eq!(
                    *call,
                    before.call + 1,
                    "history: {host}'s lock call {call} after its call {}",
                    before.call
                );
                ids.entry(host.to_string()).or_default().call = *call;
            }
            EventKind::Acquired { acq, .. } => {
                let before = mine(ids);
                assert_eq!(
                    *acq,
                    before.acq + 1,
                    "history: {host}'s acquisition {acq} after its acquisition {}",
                    before.acq
                );
                assert_eq!(
                    before.released, before.acq,
                    "history: {host} acquired {acq} while holding {}",
                    before.acq
                );
                let mine = ids.entry(host.to_string()).or_default();
                mine.acq = *acq;
                mine.seq = 0;
            }
            EventKind::WriteSent { acq, seq } | EventKind::WriteAbandoned { acq, seq } => {
                // Each write leaves, or is abandoned, once, in order.
                let before = mine(ids);
                assert!(
                    *acq >= 1 && *acq == before.acq && *seq == before.seq + 1,
                    "history: {host}'s {} {seq} of acquisition {acq}, after write {} of {}",
                    kind.name(),
                    before.seq,
                    before.acq
                );
                ids.entry(host.to_string()).or_default().seq = *seq;
            }
            EventKind::Released { acq, .. } => {
                let before = mine(ids);
                assert!(
                    *acq >= 1 && *acq == before.acq && before.released < *acq,
                    "history: {host} released acquisition {acq}, its latest being {} and {} released",
                    before.acq,
                    before.released
                );
                ids.entry(host.to_string()).or_default().released = *acq;
            }
            EventKind::ValidityExpired { acq }
            | EventKind::Extended { acq, .. }
            | EventKind::Lost { acq, .. }
            | EventKind::Reentered { acq, .. }
            | EventKind::ReentryReleased { acq, .. }
            | EventKind::ReentryFailed { acq, .. }
            | EventKind::ReleaseStart { acq } => {
                let latest = mine(ids).acq;
                assert!(
                    *acq >= 1 && *acq == latest,
                    "history: {host}'s {} of acquisition {acq}, its latest being {latest}",
                    kind.name()
                );
            }
            EventKind::WriteApplied { client, acq, .. }
            | EventKind::WriteRejected { client, acq, .. } => {
                let made = ids.get(client).map_or(0, |i| i.acq);
                assert!(
                    *acq >= 1 && *acq <= made,
                    "history: {host}'s {} of {client}'s acquisition {acq}, which made {made}",
                    kind.name()
                );
            }
            _ => {}
        }
    }
}

/// Where hosts record events. Cheap to clone; shared by every host of a run.
///
/// Events are kept only briefly: [`Recorder::flush`] hands those older than
/// a given time, sorted by time (stable: same-time events keep the order
/// they were recorded in), to the recorder's sink, which checks them, hashes
/// them or keeps them as it likes. So a run's memory does not grow with its
/// simulated duration unless the sink keeps the events.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Mutex<Inner>>,
}

impl Recorder {
    /// A recorder that hands events to `sink`, in time order, and keeps none.
    pub fn with_sink(sink: Sink) -> Self {
        Recorder {
            inner: Arc::new(Mutex::new(Inner {
                buffer: Vec::new(),
                flushed_to: Duration::ZERO,
                handed: Duration::ZERO,
                ids: BTreeMap::new(),
                down: BTreeSet::new(),
                ended: None,
                sink,
            })),
        }
    }

    /// Records `kind` for `host` at global time `time`, which must not be
    /// before what was already handed on: the driver hands on only events
    /// well behind the present, and nothing records further back than a
    /// tick. An earlier time would reorder the history behind the
    /// checkers' back, so it is a bug and panics (a run reports it as an
    /// internal error, exit 70).
    pub fn record(&self, time: Duration, host: &str, kind: EventKind) {
        let mut inner = self.lock();
        assert!(
            time >= inner.flushed_to,
            "event {} of {host} recorded at {time:?}, after events up to {:?} were checked",
            kind.name(),
            inner.flushed_to
        );
        inner.follow(time, host, &kind);
        inner.buffer.push(Event {
            time,
            host: host.to_string(),
            kind,
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands on, in time order, every event recorded before `before`: no
    /// later record may come earlier than that.
    pub fn flush(&self, before: Duration) {
        let mut inner = self.lock();
        let inner = &mut *inner;
        if before <= inner.flushed_to {
            return;
        }
        inner.flushed_to = before;
        if inner.buffer.is_empty() {
            return;
        }
        inner.buffer.sort_by_key(|e| e.time);
        let n = inner.buffer.partition_point(|e| e.time < before);
        for e in inner.buffer.drain(..n) {
            // The sink (the checker) takes them in time order, across
            // flushes too: `record` refuses what is older than a flush.
            assert!(
                e.time >= inner.handed,
                "history: {} {} at {:?} handed on after an event at {:?}",
                e.host,
                e.kind.name(),
                e.time,
                inner.handed
            );
            inner.handed = e.time;
            (inner.sink)(e);
        }
    }

    /// Hands on every event left: the run is over.
    pub fn flush_all(&self) {
        self.flush(Duration::MAX);
        let left = self.lock().buffer.len();
        assert_eq!(left, 0, "history: {left} events kept after the run's end");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_depends_on_every_field_and_order() {
        let kept: Arc<Mutex<Vec<Event>>> = Arc::default();
        let k = kept.clone();
        let r = Recorder::with_sink(Box::new(move |e| k.lock().unwrap().push(e)));
        let finish = || {
            r.flush_all();
            History {
                events: kept.lock().unwrap().clone(),
            }
        };
        r.record(
            Duration::from_millis(1),
            "c1",
            EventKind::LockCall {
                call: 1,
                resource: "lock".into(),
            },
        );
        r.record(
            Duration::from_millis(2),
            "n1",
            EventKind::KeyRemoved {
                key: "lock".into(),
                mark: None,
                by: None,
            },
        );
        let a = finish();
        let mut b = a.clone();
        b.events[1].host = "n2".into();
        let mut c = a.clone();
        c.events.swap(0, 1);
        assert_ne!(a.trace(), b.trace());
        assert_ne!(a.trace(), c.trace());
        assert_eq!(a.trace(), finish().trace());
        assert_eq!(a.trace().len(), 16);
        assert_eq!(a.events[0].row()[0], "1.000");
    }
}

//! The history of one run: every event with its simulated global time and
//! host, in the order it happened.
//!
//! Hosts record into a shared [`Recorder`]; the checkers ([`crate::check`])
//! and the reports read the finished [`History`]. An event's CSV row is
//! `time_ms,host,event,detail` and the run's `trace` is a 64-bit FNV-1a hash
//! of all rows, so the same file and seed give the same trace on any machine.

use crate::scenario::Restart;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One acquisition, numbered per client from 1: `(client, n)`.
pub type AcqId = (String, u64);

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
    // --- nodes ---
    /// A node stored the lock key (its token, expiry on its wall clock).
    KeySet {
        key: String,
        token: String,
        expires_at: Option<i64>,
    },
    /// A node's lock key got a new expiry.
    KeyExpiry { key: String, expires_at: i64 },
    /// A node removed the lock key (release, expiry or flush).
    KeyRemoved { key: String },
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
}

impl EventKind {
    /// The `event` column of `history.csv`.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::LockCall { .. } => "lock_call",
            EventKind::Acquired { .. } => "acquired",
            EventKind::LockFailed { .. } => "lock_failed",
            EventKind::WriteSent { .. } => "write_sent",
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
            EventKind::KeyExpiry { .. } => "key_expiry",
            EventKind::KeyRemoved { .. } => "key_removed",
            EventKind::NodeUp { .. } => "node_up",
            EventKind::Fault(_) => "fault",
            EventKind::FaultSkipped { .. } => "fault_skipped",
            EventKind::Failover { .. } => "failover",
            EventKind::End => "end",
        }
    }

    /// The `detail` column: `key=value` pairs separated by spaces.
    pub fn detail(&self) -> String {
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
            EventKind::WriteSent { acq, seq } => format!("acq={acq} seq={seq}"),
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
                token,
                expires_at,
            } => format!(
                "key={key} token={token} expires_at={}",
                expires_at.map_or("-".to_string(), |t| t.to_string())
            ),
            EventKind::KeyExpiry { key, expires_at } => {
                format!("key={key} expires_at={expires_at}")
            }
            EventKind::KeyRemoved { key } => format!("key={key}"),
            EventKind::NodeUp { keys } => format!("keys={keys}"),
            EventKind::Fault(fault) => fault.to_string(),
            EventKind::FaultSkipped { fault, reason } => format!("{fault} reason={reason}"),
            EventKind::Failover {
                old_master,
                new_master,
            } => format!("old={old_master} new={new_master}"),
            EventKind::End => String::new(),
        }
    }
}

/// A fault as it was applied, for the history: its kind and parameters,
/// with the master resolved to its host and a latency drawn. Its
/// [`Display`](fmt::Display) is the `detail` column: `what=<name>` then
/// `key=value` pairs (`what=crash host=n1 restart=never`). Durations are in
/// whole milliseconds, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultEvent {
    /// `host` lost power; `restart` is what it does next.
    Crash { host: String, restart: Restart },
    /// `host`, down after a crash, was started again.
    Restart { host: String },
    /// The network was cut between the hosts of every two `sides` (only
    /// from each side to the later ones when `oneway`), for `for_ms` when
    /// timed, else until a heal.
    Partition {
        sides: Vec<Vec<String>>,
        oneway: bool,
        for_ms: Option<u64>,
    },
    /// `host` was cut off from every other host, for `for_ms` when timed.
    Isolate { host: String, for_ms: Option<u64> },
    /// Every partition and isolation was removed.
    Heal,
    /// `host` was paused (stop-the-world) for `for_ms`.
    Pause { host: String, for_ms: u64 },
    /// `host`'s wall clock stepped by `by_ms` (negative: backwards).
    ClockJump { host: String, by_ms: f64 },
    /// `host`'s clock rate changed from `from` to `rate`.
    ClockRate { host: String, rate: f64, from: f64 },
    /// The link `between` two hosts got a one-way latency of `latency_ms`,
    /// for `for_ms` when timed.
    Latency {
        between: (String, String),
        latency_ms: u64,
        for_ms: Option<u64>,
    },
}

impl FaultEvent {
    /// The fault's name, as in scenario files (`crash`, `clock-rate`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            FaultEvent::Crash { .. } => "crash",
            FaultEvent::Restart { .. } => "restart",
            FaultEvent::Partition { .. } => "partition",
            FaultEvent::Isolate { .. } => "isolate",
            FaultEvent::Heal => "heal",
            FaultEvent::Pause { .. } => "pause",
            FaultEvent::ClockJump { .. } => "clock-jump",
            FaultEvent::ClockRate { .. } => "clock-rate",
            FaultEvent::Latency { .. } => "latency",
        }
    }

    /// The one host the fault is about, if it is about one.
    pub fn host(&self) -> Option<&str> {
        match self {
            FaultEvent::Crash { host, .. }
            | FaultEvent::Restart { host }
            | FaultEvent::Isolate { host, .. }
            | FaultEvent::Pause { host, .. }
            | FaultEvent::ClockJump { host, .. }
            | FaultEvent::ClockRate { host, .. } => Some(host),
            FaultEvent::Partition { .. } | FaultEvent::Heal | FaultEvent::Latency { .. } => None,
        }
    }

    /// How long the fault lasts, in whole ms, when it ends by itself.
    pub fn for_ms(&self) -> Option<u64> {
        match self {
            FaultEvent::Partition { for_ms, .. }
            | FaultEvent::Isolate { for_ms, .. }
            | FaultEvent::Latency { for_ms, .. } => *for_ms,
            FaultEvent::Pause { for_ms, .. } => Some(*for_ms),
            _ => None,
        }
    }
}

/// A partition's sides as written in the history: hosts joined by `+`,
/// sides by `|` (`c1|n1+n2`).
pub fn sides_text(sides: &[Vec<String>]) -> String {
    let text: Vec<String> = sides.iter().map(|s| s.join(" ")).collect();
    text.join("|").replace(' ', "+")
}

/// A restart policy as written in the history: `immediate`, `never` or the
/// delay (`1.5s`).
fn restart_text(r: Restart) -> String {
    match r {
        Restart::Immediate => "immediate".into(),
        Restart::Never => "never".into(),
        Restart::After(d) => crate::duration::format(d),
    }
}

/// ` for_ms=N` when the fault is timed.
fn write_for(f: &mut fmt::Formatter<'_>, for_ms: &Option<u64>) -> fmt::Result {
    match for_ms {
        Some(ms) => write!(f, " for_ms={ms}"),
        None => Ok(()),
    }
}

impl fmt::Display for FaultEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "what={}", self.name())?;
        match self {
            FaultEvent::Crash { host, restart } => {
                write!(f, " host={host} restart={}", restart_text(*restart))
            }
            FaultEvent::Restart { host } => write!(f, " host={host}"),
            FaultEvent::Partition {
                sides,
                oneway,
                for_ms,
            } => {
                write!(f, " sides={} oneway={oneway}", sides_text(sides))?;
                write_for(f, for_ms)
            }
            FaultEvent::Isolate { host, for_ms } => {
                write!(f, " host={host}")?;
                write_for(f, for_ms)
            }
            FaultEvent::Heal => Ok(()),
            FaultEvent::Pause { host, for_ms } => write!(f, " host={host} for_ms={for_ms}"),
            FaultEvent::ClockJump { host, by_ms } => write!(f, " host={host} by_ms={by_ms}"),
            FaultEvent::ClockRate { host, rate, from } => {
                write!(f, " host={host} rate={rate} from={from}")
            }
            FaultEvent::Latency {
                between: (a, b),
                latency_ms,
                for_ms,
            } => {
                write!(f, " between={a}+{b} latency_ms={latency_ms}")?;
                write_for(f, for_ms)
            }
        }
    }
}

/// A fault that could do nothing, for the history: written like a
/// [`FaultEvent`] (`what=crash host=n1`), without what it would have done.
#[derive(Clone, Debug, PartialEq)]
pub enum SkippedFault {
    /// Crashing `host`, which was down.
    Crash { host: String },
    /// Restarting `host`, which was up or had crashed again.
    Restart { host: String },
    /// Pausing `host` for `for_ms`, while it was down.
    Pause { host: String, for_ms: u64 },
}

impl SkippedFault {
    /// The fault's name, as in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            SkippedFault::Crash { .. } => "crash",
            SkippedFault::Restart { .. } => "restart",
            SkippedFault::Pause { .. } => "pause",
        }
    }

    /// The host it was meant for.
    pub fn host(&self) -> &str {
        match self {
            SkippedFault::Crash { host }
            | SkippedFault::Restart { host }
            | SkippedFault::Pause { host, .. } => host,
        }
    }
}

impl fmt::Display for SkippedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "what={} host={}", self.name(), self.host())?;
        match self {
            SkippedFault::Pause { for_ms, .. } => write!(f, " for_ms={for_ms}"),
            SkippedFault::Crash { .. } | SkippedFault::Restart { .. } => Ok(()),
        }
    }
}

/// Why a fault was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A crash of a node that was down.
    AlreadyDown,
    /// A restart of a node that was up.
    AlreadyUp,
    /// A crash's delayed restart, after the node had crashed again: the
    /// later crash's restart applies.
    CrashedAgain,
    /// A pause of a node that was down.
    Down,
}

impl SkipReason {
    /// As written in the history (`already_down`).
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::AlreadyDown => "already_down",
            SkipReason::AlreadyUp => "already_up",
            SkipReason::CrashedAgain => "crashed_again",
            SkipReason::Down => "down",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
    pub fn time_ms(&self) -> String {
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
    sink: Sink,
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
            (inner.sink)(e);
        }
    }

    /// Hands on every event left: the run is over.
    pub fn flush_all(&self) {
        self.flush(Duration::MAX);
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
            EventKind::KeyRemoved { key: "lock".into() },
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

    fn detail(kind: EventKind) -> String {
        kind.detail()
    }

    fn host(h: &str) -> String {
        h.to_string()
    }

    // The strings below are what the untyped history wrote (a run of every
    // fault kind before the faults were typed): the detail column must not
    // change.
    #[test]
    fn a_crash_is_written_as_before() {
        let crash = |restart| {
            detail(EventKind::Fault(FaultEvent::Crash {
                host: host("n1"),
                restart,
            }))
        };
        assert_eq!(crash(Restart::Never), "what=crash host=n1 restart=never");
        assert_eq!(
            crash(Restart::Immediate),
            "what=crash host=n1 restart=immediate"
        );
        assert_eq!(
            crash(Restart::After(Duration::from_millis(1500))),
            "what=crash host=n1 restart=1.5s"
        );
        assert_eq!(
            crash(Restart::After(Duration::from_millis(250))),
            "what=crash host=n1 restart=250ms"
        );
    }

    #[test]
    fn a_restart_is_written_as_before() {
        let restart = FaultEvent::Restart { host: host("n1") };
        assert_eq!(detail(EventKind::Fault(restart)), "what=restart host=n1");
    }

    #[test]
    fn a_partition_is_written_as_before() {
        let sides = |s: &[&[&str]]| -> Vec<Vec<String>> {
            s.iter()
                .map(|x| x.iter().map(|h| host(h)).collect())
                .collect()
        };
        let timed = FaultEvent::Partition {
            sides: sides(&[&["c1"], &["n1", "n2"]]),
            oneway: true,
            for_ms: Some(300),
        };
        assert_eq!(
            detail(EventKind::Fault(timed)),
            "what=partition sides=c1|n1+n2 oneway=true for_ms=300"
        );
        let open = FaultEvent::Partition {
            sides: sides(&[&["c1", "n3"], &["n1"], &["n2"]]),
            oneway: false,
            for_ms: None,
        };
        assert_eq!(
            detail(EventKind::Fault(open)),
            "what=partition sides=c1+n3|n1|n2 oneway=false"
        );
    }

    #[test]
    fn an_isolation_is_written_as_before() {
        let isolate = |for_ms| {
            detail(EventKind::Fault(FaultEvent::Isolate {
                host: host("n2"),
                for_ms,
            }))
        };
        assert_eq!(isolate(Some(1234)), "what=isolate host=n2 for_ms=1234");
        assert_eq!(isolate(None), "what=isolate host=n2");
    }

    #[test]
    fn a_heal_is_written_as_before() {
        assert_eq!(detail(EventKind::Fault(FaultEvent::Heal)), "what=heal");
    }

    #[test]
    fn a_pause_is_written_as_before() {
        let pause = FaultEvent::Pause {
            host: host("c1"),
            for_ms: 150,
        };
        assert_eq!(
            detail(EventKind::Fault(pause)),
            "what=pause host=c1 for_ms=150"
        );
    }

    #[test]
    fn a_clock_jump_is_written_as_before() {
        let jump = |by_ms| {
            detail(EventKind::Fault(FaultEvent::ClockJump {
                host: host("c4"),
                by_ms,
            }))
        };
        assert_eq!(jump(-1500.0), "what=clock-jump host=c4 by_ms=-1500");
        assert_eq!(jump(8000.0), "what=clock-jump host=c4 by_ms=8000");
        assert_eq!(
            jump(-4325.777244497811),
            "what=clock-jump host=c4 by_ms=-4325.777244497811"
        );
    }

    #[test]
    fn a_clock_rate_change_is_written_as_before() {
        let rate = |rate, from| {
            detail(EventKind::Fault(FaultEvent::ClockRate {
                host: host("c1"),
                rate,
                from,
            }))
        };
        assert_eq!(rate(0.5, 1.0), "what=clock-rate host=c1 rate=0.5 from=1");
        assert_eq!(
            rate(1.25, 0.5),
            "what=clock-rate host=c1 rate=1.25 from=0.5"
        );
    }

    #[test]
    fn a_slow_link_is_written_as_before() {
        let latency = |latency_ms, for_ms| {
            detail(EventKind::Fault(FaultEvent::Latency {
                between: (host("c1"), host("n1")),
                latency_ms,
                for_ms,
            }))
        };
        assert_eq!(
            latency(1200, Some(500)),
            "what=latency between=c1+n1 latency_ms=1200 for_ms=500"
        );
        assert_eq!(
            latency(10, None),
            "what=latency between=c1+n1 latency_ms=10"
        );
    }

    #[test]
    fn skipped_faults_are_written_as_before() {
        let skipped = |fault, reason| detail(EventKind::FaultSkipped { fault, reason });
        let crash = SkippedFault::Crash { host: host("n1") };
        let restart = |h: &str| SkippedFault::Restart { host: host(h) };
        let pause = SkippedFault::Pause {
            host: host("n3"),
            for_ms: 2000,
        };
        assert_eq!(
            skipped(crash, SkipReason::AlreadyDown),
            "what=crash host=n1 reason=already_down"
        );
        assert_eq!(
            skipped(restart("n1"), SkipReason::AlreadyUp),
            "what=restart host=n1 reason=already_up"
        );
        assert_eq!(
            skipped(restart("n3"), SkipReason::CrashedAgain),
            "what=restart host=n3 reason=crashed_again"
        );
        assert_eq!(
            skipped(pause, SkipReason::Down),
            "what=pause host=n3 for_ms=2000 reason=down"
        );
    }

    #[test]
    fn fault_events_are_named_fault_and_fault_skipped() {
        assert_eq!(EventKind::Fault(FaultEvent::Heal).name(), "fault");
        let skipped = EventKind::FaultSkipped {
            fault: SkippedFault::Crash { host: host("n1") },
            reason: SkipReason::AlreadyDown,
        };
        assert_eq!(skipped.name(), "fault_skipped");
    }
}

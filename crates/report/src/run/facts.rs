//! Helpers shared by the run report's files, and the facts drawn from a
//! history for the timeline and the report ([`Facts`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::output::RunOutput;
use redlock_harness::history::keys::Shape;
use redlock_harness::history::{
    sides_text, Event, EventKind, FaultEvent, History, SkipReason, SkippedFault,
};

/// Milliseconds, rounded to the microsecond as in `history.csv`.
pub(crate) fn millis_rounded(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

pub(crate) fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// `12.345 s`.
pub(crate) fn fmt_t(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// A length: `850.0 ms` under a second, else `2.345 s`.
pub(crate) fn fmt_len(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

/// What a report says of a figure the run could not measure (a lab run's
/// lock calls, acquire latencies and time unavailable).
pub(crate) const NOT_MEASURED: &str = "not measured";

/// The lock on `resource` in a sentence: `the lock` for the default
/// resource `lock` (never "the lock lock"), `the lock "orders"` otherwise.
pub(crate) fn the_lock(resource: &str) -> String {
    if resource == "lock" {
        "the lock".to_string()
    } else {
        format!("the lock \"{resource}\"")
    }
}

/// A millisecond figure for tables: `12.3 ms`.
pub(crate) fn fmt_ms(x: f64) -> String {
    format!("{:.1} ms", finite(x))
}

pub(crate) fn last_time(h: &History) -> Duration {
    h.events
        .iter()
        .map(|e| e.time)
        .max()
        .unwrap_or(Duration::ZERO)
}

/// A non-negative, finite ms value as a duration (at most ~30 years).
fn ms_to_duration(x: f64) -> Option<Duration> {
    if !x.is_finite() || x < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(x.min(1e12) / 1e3).ok()
}

/// A span of time on one host's row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Span {
    pub(crate) host: String,
    pub(crate) start: Duration,
    pub(crate) end: Duration,
}

/// A node holding the lock key with some token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeySpan {
    pub(crate) node: String,
    pub key: String,
    pub(crate) token: String,
    pub(crate) start: Duration,
    pub(crate) end: Duration,
    /// Restored by a restart rather than set by a client (a guess: the
    /// history says how many keys came back, not which).
    pub(crate) restored: bool,
}

/// A partition (all rows) or an isolation (`host`'s row).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PartSpan {
    pub(crate) start: Duration,
    pub(crate) end: Duration,
    /// Isolated host, for `isolate`.
    pub(crate) host: Option<String>,
}

/// A fault or failover, for markers and lists.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Marker {
    pub(crate) time: Duration,
    /// `crash`, `partition`, ..., or `failover`.
    pub(crate) what: String,
    /// Short label for the chart: `crash n2`.
    pub(crate) label: String,
    /// Sentence for the report.
    pub(crate) text: String,
    /// Index of the event in the history.
    pub(crate) index: usize,
}

/// What the chart and the report need, computed once from the history.
pub(crate) struct Facts {
    /// Clients: the scenario's, then any other host that made lock calls.
    pub(crate) clients: Vec<String>,
    /// Nodes: the scenario's, then any other host with node events.
    pub nodes: Vec<String>,
    /// Token -> (client, acq), from `acquired` events.
    pub(crate) owners: BTreeMap<String, (String, u64)>,
    pub(crate) key_spans: Vec<KeySpan>,
    pub(crate) down: Vec<Span>,
    pub(crate) paused: Vec<Span>,
    /// Lock calls in progress (client waiting).
    pub(crate) waiting: Vec<Span>,
    pub(crate) partitions: Vec<PartSpan>,
    pub(crate) markers: Vec<Marker>,
    /// Time of the last event.
    pub(crate) end: Duration,
}

/// The state of the scan of a history in [`Facts::new`]: what was found so
/// far, and the spans still open.
#[derive(Default)]
struct Scan {
    /// Hosts known as clients.
    seen_c: BTreeSet<String>,
    /// Hosts known as nodes.
    seen_n: BTreeSet<String>,
    owners: BTreeMap<String, (String, u64)>,
    key_spans: Vec<KeySpan>,
    /// node -> key -> (token, since, restored)
    open: BTreeMap<String, BTreeMap<String, (String, Duration, bool)>>,
    /// node -> keys lost in its last crash
    lost: BTreeMap<String, BTreeMap<String, String>>,
    down_since: BTreeMap<String, Duration>,
    down: Vec<Span>,
    paused: Vec<Span>,
    waiting: Vec<Span>,
    call_since: BTreeMap<String, Duration>,
    partitions: Vec<PartSpan>,
    /// Partitions and isolations without `for`, ended by the next heal.
    open_parts: Vec<(Duration, Option<String>)>,
    markers: Vec<Marker>,
}

/// Records that `node` held `key` with `(token, since, restored)` until `at`.
fn close(
    key_spans: &mut Vec<KeySpan>,
    node: &str,
    key: &str,
    (token, since, restored): (String, Duration, bool),
    at: Duration,
) {
    key_spans.push(KeySpan {
        node: node.to_string(),
        key: key.to_string(),
        token,
        start: since,
        end: at.max(since),
        restored,
    });
}

/// The clients and nodes of a run: the scenario's, then the other hosts
/// seen in the history, in order of appearance; and the two as sets.
fn hosts(out: &RunOutput) -> (Vec<String>, Vec<String>, BTreeSet<String>, BTreeSet<String>) {
    let mut clients: Vec<String> = out
        .scenario
        .clients
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let mut nodes: Vec<String> = (1..=out.scenario.cluster.nodes)
        .map(|i| format!("n{i}"))
        .collect();
    let mut seen_c: BTreeSet<String> = clients.iter().cloned().collect();
    let mut seen_n: BTreeSet<String> = nodes.iter().cloned().collect();
    for e in &out.history.events {
        let client = matches!(
            e.kind,
            EventKind::LockCall { .. } | EventKind::Acquired { .. } | EventKind::LockFailed { .. }
        );
        let node = matches!(
            e.kind,
            EventKind::KeySet { .. }
                | EventKind::KeyRemoved { .. }
                | EventKind::KeyExtended { .. }
                | EventKind::KeyExpired { .. }
                | EventKind::NodeUp { .. }
        );
        if client && !seen_c.contains(&e.host) {
            seen_c.insert(e.host.clone());
            clients.push(e.host.clone());
        } else if node && !seen_n.contains(&e.host) {
            seen_n.insert(e.host.clone());
            nodes.push(e.host.clone());
        }
    }
    (clients, nodes, seen_c, seen_n)
}

impl Scan {
    /// Is `s` a client or a node?
    fn is_host(&self, s: &str) -> bool {
        self.seen_c.contains(s) || self.seen_n.contains(s)
    }

    /// Takes event number `index` into account.
    fn event(&mut self, index: usize, e: &Event) {
        let t = e.time;
        match &e.kind {
            EventKind::LockCall { .. } => {
                if let Some(s) = self.call_since.insert(e.host.clone(), t) {
                    self.waiting.push(span(&e.host, s, t));
                }
            }
            EventKind::Acquired { acq, token, .. } => {
                self.owners
                    .entry(token.clone())
                    .or_insert_with(|| (e.host.clone(), *acq));
                if let Some(s) = self.call_since.remove(&e.host) {
                    self.waiting.push(span(&e.host, s, t));
                }
            }
            EventKind::LockFailed { .. } => {
                if let Some(s) = self.call_since.remove(&e.host) {
                    self.waiting.push(span(&e.host, s, t));
                }
            }
            EventKind::KeySet {
                key, shape, token, ..
            } => {
                // A key's first mark stands for it: a string's value is
                // replaced, a hash's or sorted set's later marks add.
                let keys = self.open.entry(e.host.clone()).or_default();
                if *shape != Shape::String && keys.contains_key(key) {
                    return;
                }
                if let Some(prev) = keys.insert(key.clone(), (token.clone(), t, false)) {
                    close(&mut self.key_spans, &e.host, key, prev, t);
                }
            }
            EventKind::KeyRemoved { key, mark, .. } | EventKind::KeyExpired { key, mark, .. } => {
                let Some(keys) = self.open.get_mut(&e.host) else {
                    return;
                };
                let ends = match (mark, keys.get(key)) {
                    (None, _) => true,
                    (Some((_, m)), Some((token, _, _))) => m == token,
                    (Some(_), None) => false,
                };
                if let Some(prev) = ends.then(|| keys.remove(key)).flatten() {
                    close(&mut self.key_spans, &e.host, key, prev, t);
                }
            }
            EventKind::NodeUp { keys } => self.node_up(&e.host, *keys, t),
            EventKind::Fault(fault) => self.fault(index, e, fault),
            EventKind::FaultSkipped { fault, reason } => {
                self.markers.push(skipped_marker(index, t, fault, *reason))
            }
            EventKind::Failover {
                old_master,
                new_master,
            } => self.markers.push(Marker {
                time: t,
                what: "failover".to_string(),
                label: format!("failover→{new_master}"),
                text: format!(
                    "the sentinel promoted {new_master} to master (the old master was {old_master})"
                ),
                index,
            }),
            _ => {}
        }
    }

    /// Node `host` came up at `t` with `keys` of the keys it lost restored.
    fn node_up(&mut self, host: &str, keys: usize, t: Duration) {
        if let Some(s) = self.down_since.remove(host) {
            self.down.push(span(host, s, t));
        }
        if let Some(was) = self.lost.remove(host) {
            let slot = self.open.entry(host.to_string()).or_default();
            for (key, token) in was.into_iter().take(keys) {
                slot.entry(key).or_insert((token, t, true));
            }
        }
    }

    /// A fault (event number `index`): its spans, and its marker.
    fn fault(&mut self, index: usize, e: &Event, fault: &FaultEvent) {
        let t = e.time;
        let host = fault
            .host()
            .map(str::to_string)
            .or_else(|| self.is_host(&e.host).then(|| e.host.clone()));
        let for_ = for_duration(fault);
        match fault {
            FaultEvent::Crash { .. } => {
                if let Some(hn) = &host {
                    self.crash(hn, t);
                }
            }
            FaultEvent::Pause { .. } => {
                if let (Some(hn), Some(d)) = (&host, for_) {
                    self.paused.push(span(hn, t, t.saturating_add(d)));
                }
            }
            FaultEvent::Partition { .. } | FaultEvent::Isolate { .. } => {
                let isolate = matches!(fault, FaultEvent::Isolate { .. });
                let who = if isolate { host.clone() } else { None };
                match for_ {
                    Some(d) => self.partitions.push(PartSpan {
                        start: t,
                        end: t.saturating_add(d),
                        host: who,
                    }),
                    None => self.open_parts.push((t, who)),
                }
            }
            FaultEvent::Heal => self.heal(t),
            // A marker only: the node's `NodeUp` ends its down span; the
            // clocks and a slow link draw none.
            FaultEvent::Restart { .. }
            | FaultEvent::ClockJump { .. }
            | FaultEvent::ClockRate { .. }
            | FaultEvent::Latency { .. } => {}
        }
        self.markers
            .push(fault_marker(index, t, fault, host.as_deref()));
    }

    /// Host `hn` crashed at `t`: it goes down, its pause ends, its keys are lost.
    fn crash(&mut self, hn: &str, t: Duration) {
        self.down_since.entry(hn.to_string()).or_insert(t);
        // A pause in progress ends with the process.
        for p in self.paused.iter_mut() {
            if p.host == *hn && p.start <= t && p.end > t {
                p.end = t;
            }
        }
        if let Some(keys) = self.open.remove(hn) {
            let mut was = BTreeMap::new();
            for (key, prev) in keys {
                was.insert(key.clone(), prev.0.clone());
                close(&mut self.key_spans, hn, &key, prev, t);
            }
            self.lost.insert(hn.to_string(), was);
        }
    }

    /// A heal at `t` ends every partition, timed or not.
    fn heal(&mut self, t: Duration) {
        for (s, who) in self.open_parts.drain(..) {
            self.partitions.push(PartSpan {
                start: s,
                end: t,
                host: who,
            });
        }
        // A heal also ends timed partitions early.
        for p in self.partitions.iter_mut() {
            if p.start <= t && p.end > t {
                p.end = t;
            }
        }
    }

    /// The facts, spans still open closed at `end`.
    fn finish(mut self, clients: Vec<String>, nodes: Vec<String>, end: Duration) -> Facts {
        for (node, keys) in self.open {
            for (key, prev) in keys {
                close(&mut self.key_spans, &node, &key, prev, end);
            }
        }
        for (hn, s) in self.down_since {
            self.down.push(span(&hn, s, end.max(s)));
        }
        for (hn, s) in self.call_since {
            self.waiting.push(span(&hn, s, end.max(s)));
        }
        for (s, who) in self.open_parts {
            self.partitions.push(PartSpan {
                start: s,
                end: end.max(s),
                host: who,
            });
        }
        let mut key_spans = self.key_spans;
        let mut down = self.down;
        let mut waiting = self.waiting;
        key_spans.sort_by(|a, b| (a.start, &a.node, &a.key).cmp(&(b.start, &b.node, &b.key)));
        down.sort_by(|a, b| (a.start, &a.host).cmp(&(b.start, &b.host)));
        waiting.sort_by(|a, b| (a.start, &a.host).cmp(&(b.start, &b.host)));
        Facts {
            clients,
            nodes,
            owners: self.owners,
            key_spans,
            down,
            paused: self.paused,
            waiting,
            partitions: self.partitions,
            markers: self.markers,
            end,
        }
    }
}

impl Facts {
    /// The facts of a run, from its scenario and its history.
    pub(crate) fn new(out: &RunOutput) -> Facts {
        let h = out.history;
        let end = last_time(h);
        let (clients, nodes, seen_c, seen_n) = hosts(out);
        let mut scan = Scan {
            seen_c,
            seen_n,
            ..Scan::default()
        };
        for (index, e) in h.events.iter().enumerate() {
            scan.event(index, e);
        }
        scan.finish(clients, nodes, end)
    }

    /// Who a token belongs to: `c1 #2`, or `a failed attempt (token …)`.
    pub(crate) fn owner_label(&self, token: &str) -> String {
        match self.owners.get(token) {
            Some((c, a)) => format!("{c} #{a}"),
            None => format!("a failed attempt (token {})", short_token(token)),
        }
    }

    /// The state of `node`'s lock key(s) at `t`: `down`, `—` (no key) or
    /// the owners of the keys it holds; `, paused` when paused.
    pub(crate) fn node_state_at(&self, node: &str, t: Duration) -> String {
        let inside = |s: Duration, e: Duration| s <= t && t < e;
        let mut parts: Vec<String> = Vec::new();
        if self
            .down
            .iter()
            .any(|d| d.host == node && inside(d.start, d.end))
        {
            parts.push("down".to_string());
        } else {
            let keys: Vec<String> = self
                .key_spans
                .iter()
                .filter(|k| k.node == node && inside(k.start, k.end))
                .map(|k| {
                    let mut s = self.owner_label(&k.token);
                    if k.restored {
                        s.push_str(" (restored)");
                    }
                    s
                })
                .collect();
            if keys.is_empty() {
                parts.push("no key".to_string());
            } else {
                parts.push(keys.join(", "));
            }
        }
        if self
            .paused
            .iter()
            .any(|p| p.host == node && inside(p.start, p.end))
        {
            parts.push("paused".to_string());
        }
        parts.join(", ")
    }

    /// Nodes holding `token` at `t`.
    pub(crate) fn nodes_with_token(&self, token: &str, t: Duration) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .key_spans
            .iter()
            .filter(|k| k.token == token && k.start <= t && t < k.end)
            .map(|k| k.node.as_str())
            .collect();
        // Keep the nodes' own order (n2 before n10).
        self.nodes
            .iter()
            .filter(|n| set.contains(n.as_str()))
            .cloned()
            .collect()
    }
}

fn span(host: &str, start: Duration, end: Duration) -> Span {
    Span {
        host: host.to_string(),
        start,
        end: end.max(start),
    }
}

/// The first 8 characters of a token.
pub(crate) fn short_token(token: &str) -> String {
    let s: String = token.chars().take(8).collect();
    if s.len() < token.len() {
        format!("{s}…")
    } else {
        s
    }
}

/// A fault that did nothing: listed, marked as skipped, and never drawn as
/// the fault itself (no down or paused span; its own marker colour).
fn skipped_marker(index: usize, t: Duration, fault: &SkippedFault, reason: SkipReason) -> Marker {
    let (what, h) = (fault.name(), fault.host());
    let why = match reason {
        SkipReason::AlreadyDown => format!("{h} was already down"),
        SkipReason::AlreadyUp => format!("{h} was already up"),
        SkipReason::Down => format!("{h} was down"),
        SkipReason::CrashedAgain => {
            format!("{h} had crashed again since; that crash's restart applies")
        }
    };
    Marker {
        time: t,
        what: format!("{what} (skipped)"),
        label: format!("skipped {what} {h}"),
        text: format!("{what} of {h} (skipped: {why})"),
        index,
    }
}

/// How long a timed fault lasts, as the history has it (whole ms).
fn for_duration(fault: &FaultEvent) -> Option<Duration> {
    fault.for_ms().and_then(|ms| ms_to_duration(ms as f64))
}

/// Label and sentence for a fault event.
fn fault_marker(index: usize, t: Duration, fault: &FaultEvent, host: Option<&str>) -> Marker {
    let h = host.unwrap_or("?");
    let for_ = for_duration(fault);
    let for_text = for_
        .map(|d| format!(" for {}", fmt_len(d)))
        .unwrap_or_default();
    let for_short = for_
        .map(|d| format!(" {}", short_len(d)))
        .unwrap_or_default();
    let (label, text) = match fault {
        FaultEvent::Crash { .. } => (
            format!("crash {h}"),
            format!("{h} crashed (power loss: its memory and unsynced writes are gone)"),
        ),
        FaultEvent::Restart { .. } => (format!("restart {h}"), format!("{h} was restarted")),
        FaultEvent::Partition { sides, oneway, .. } => (
            "partition".to_string(),
            format!(
                "the network was partitioned{} between sides {}{for_text}",
                if *oneway { " one way" } else { "" },
                sides_text(sides)
            ),
        ),
        FaultEvent::Isolate { .. } => (
            format!("isolate {h}"),
            format!("{h} was cut off from every other host{for_text}"),
        ),
        FaultEvent::Heal => ("heal".to_string(), "every partition was healed".to_string()),
        FaultEvent::Pause { .. } => (
            format!("pause {h}{for_short}"),
            format!(
                "{h} was paused (stop-the-world: runs nothing, its clocks keep going){for_text}"
            ),
        ),
        FaultEvent::ClockJump { by_ms, .. } => {
            let (short, long) = jump_lengths(*by_ms);
            (
                format!("jump {h} {short}"),
                format!("{h}'s wall clock jumped by {long}"),
            )
        }
        FaultEvent::ClockRate { rate, .. } => (
            format!("rate {h} {rate}"),
            format!("{h}'s clock rate became {rate}"),
        ),
        FaultEvent::Latency {
            between: (a, b), ..
        } => (
            "latency".to_string(),
            format!("the link {a}+{b} was slowed{for_text}"),
        ),
    };
    Marker {
        time: t,
        what: fault.name().to_string(),
        label,
        text,
        index,
    }
}

/// A clock jump of `by_ms`, short and long: `+8s`, `+8.000 s`.
fn jump_lengths(by_ms: f64) -> (String, String) {
    if !by_ms.is_finite() {
        return (by_ms.to_string(), by_ms.to_string());
    }
    let sign = if by_ms < 0.0 { "-" } else { "+" };
    let d = ms_to_duration(by_ms.abs()).unwrap_or_default();
    (
        format!("{sign}{}", short_len(d)),
        format!("{sign}{}", fmt_len(d)),
    )
}

/// `2s`, `150ms`, `1.5s`.
fn short_len(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 1000.0 {
        let s = ms / 1000.0;
        if (s - s.round()).abs() < 1e-9 {
            format!("{s:.0}s")
        } else {
            format!("{s:.1}s")
        }
    } else {
        format!("{ms:.0}ms")
    }
}

/// Rows of `history` to show as the events around a violation: every event
/// with `from <= time <= to`; when there are more than `cap`, the routine
/// ones (writes sent, key expiry changes, then writes applied by other
/// acquisitions) go first, then the middle. Returns the indices shown, with
/// `None` for a gap, and how many were left out.
pub(crate) fn excerpt(
    history: &History,
    from: Duration,
    to: Duration,
    keep: &dyn Fn(&Event) -> bool,
    cap: usize,
) -> (Vec<Option<usize>>, usize) {
    let all: Vec<usize> = history
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.time >= from && e.time <= to)
        .map(|(i, _)| i)
        .collect();
    let total = all.len();
    let mut rows = all;
    let passes: [&dyn Fn(&Event) -> bool; 3] = [
        &|e| matches!(e.kind, EventKind::WriteSent { .. }),
        &|e| matches!(e.kind, EventKind::KeyExtended { .. }),
        &|e| matches!(e.kind, EventKind::WriteApplied { .. }),
    ];
    for drop in passes {
        if rows.len() <= cap {
            break;
        }
        rows.retain(|&i| {
            let e = &history.events[i];
            keep(e) || !drop(e)
        });
    }
    let mut out: Vec<Option<usize>> = Vec::new();
    if rows.len() > cap {
        let head = cap / 4;
        let tail = cap.saturating_sub(head + 1);
        out.extend(rows[..head].iter().map(|&i| Some(i)));
        out.push(None);
        out.extend(rows[rows.len() - tail..].iter().map(|&i| Some(i)));
    } else {
        out.extend(rows.iter().map(|&i| Some(i)));
    }
    let shown = out.iter().filter(|r| r.is_some()).count();
    (out, total - shown)
}

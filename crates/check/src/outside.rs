//! The lab's checker: a lab run's history judged from outside the clients
//! (`redlock-sim lab`, "what is checked" in its contract). The clients are
//! other people's programs: what they did is known from the nodes (who made
//! each key), the store (each write, by the port it came in on) and what
//! their drivers said (`HELD`, `RELEASED`), never from inside them.
//!
//! - **Ownership**: a client owns a resource while the key it created (a
//!   `key_set` by it; the same token brought back by replication or a
//!   restart is still its) is present on a majority of the nodes
//!   (`redlock`), or on the node that is master (`single`: `n1`, then each
//!   failover's new master). A crash empties a node until it is up again
//!   with what its disk kept. A key is present until the node removes it:
//!   a key past its expiry but not yet removed (the node's active expiry
//!   runs every 100 ms of its clock) still counts, so a write in that gap is
//!   protected rather than unprotected; an acquisition by another client
//!   removes it first (the node deletes an expired key before the `SET`).
//! - **Acquisitions**: what a driver's `HELD` opens, until its `RELEASED`
//!   (the history's `acquired` ... `release_start`); for a client whose
//!   driver never says `HELD`, each unbroken spell of its ownership.
//! - **Stale write**: a write the store applied while another client owned
//!   the resource, or after a `HELD` of another client later than the start
//!   of the writer's acquisition (any `HELD` of another, when the writer
//!   never acquired): a violation.
//! - **Unprotected write**: applied while nobody owned the resource and not
//!   stale: counted, not a violation.
//! - **How a stale write got late**: by its `write_sent` (when the writer's
//!   link to the store read it, see `redlock_lab::sent`) against the
//!   acquisitions, as in the simulation ([`StaleKind`]); a write with none
//!   (it came through no link) is taken as sent when applied.
//! - **Lock overlaps** and **write interleavings**: the simulation's
//!   checkers ([`super::Checker`]) over the acquisitions above.

use super::{CheckResult, Checker, Hold, StaleKind, StaleWrite};
use redlock_history::ownership::Ownership;
use redlock_history::{Event, EventKind, History};
use redlock_scenario::Topology;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Judges a lab history of a cluster of `nodes` nodes in `topology`.
pub fn check(history: &History, topology: Topology, nodes: usize) -> CheckResult {
    // The lab's recorder puts each event at its place in time: ownership,
    // spells and the stale-write rule read the history in that order.
    let backwards = history.events.windows(2).find(|w| w[1].time < w[0].time);
    assert!(
        backwards.is_none(),
        "outside: the history is out of time order: {:?}",
        backwards.map(|w| (&w[0], &w[1]))
    );
    let owners = ownership(history, topology, nodes);
    let reporting: BTreeSet<&str> = history
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Acquired { .. }))
        .map(|e| e.host.as_str())
        .collect();
    let spells = spells(&owners, &reporting, history.events.last().map(|e| e.time));
    let events = with_spells(history, &spells, &reporting);
    let mut checker = Checker::default();
    for e in &events {
        checker.feed(e);
    }
    let mut result = checker.finish();
    let (mut stale, unprotected) = writes(&events, &owners);
    let applied = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::WriteApplied { .. }))
        .count();
    assert!(
        stale.len() + unprotected as usize <= applied,
        "outside: {} stale and {unprotected} unprotected writes of {applied} applied",
        stale.len()
    );
    send_times(&mut stale, &events);
    classify(&mut stale, &result.holds);
    result.stale_writes = stale;
    result.unprotected_writes = Some(unprotected);
    result.verdict = result.verdict_of_violations();
    result
}

/// Who owned each resource from when: `(time, resource, owner)` at every
/// change, in time order, the owner with the token it holds the lock with.
type Owners = Vec<(Duration, String, Option<(String, String)>)>;

fn ownership(history: &History, topology: Topology, nodes: usize) -> Owners {
    let mut o = Ownership::new(topology, nodes);
    let mut out = Owners::new();
    for e in &history.events {
        for (resource, owner) in o.feed(e) {
            let owner = owner.map(|c| {
                let token = o.token_of(&c, &resource).unwrap_or_else(|| "-".into());
                (c, token)
            });
            out.push((e.time, resource, owner));
        }
    }
    out
}

/// One client's unbroken ownership of a resource: `[start, end)`.
#[derive(Clone, Debug)]
struct Spell {
    client: String,
    token: String,
    resource: String,
    acq: u64,
    start: Duration,
    end: Duration,
}

/// The spells of the clients that never said `HELD`; a spell still open
/// at the end of the history ends there.
fn spells(owners: &Owners, reporting: &BTreeSet<&str>, end: Option<Duration>) -> Vec<Spell> {
    let end = end.unwrap_or_default();
    let mut open: BTreeMap<String, Spell> = BTreeMap::new();
    let mut count: BTreeMap<String, u64> = BTreeMap::new();
    let mut out = Vec::new();
    for (t, resource, owner) in owners {
        if let Some(mut s) = open.remove(resource) {
            assert!(
                *t >= s.start,
                "outside: {}'s ownership of {resource} ends at {t:?}, before it began at {:?}",
                s.client,
                s.start
            );
            s.end = *t;
            out.push(s);
        }
        let Some((c, token)) = owner
            .as_ref()
            .filter(|(c, _)| !reporting.contains(c.as_str()))
        else {
            continue;
        };
        let n = count.entry(c.clone()).or_default();
        *n += 1;
        let spell = Spell {
            client: c.clone(),
            token: token.clone(),
            resource: resource.clone(),
            acq: *n,
            start: *t,
            end,
        };
        open.insert(resource.clone(), spell);
    }
    for s in open.into_values() {
        assert!(
            end >= s.start,
            "outside: {}'s ownership of {} open at the history's end {end:?}, begun after it at {:?}",
            s.client,
            s.resource,
            s.start
        );
        out.push(s);
    }
    out.sort_by_key(|s| s.start);
    out
}

/// The history with each spell as an acquisition (`acquired` at its
/// start, `release_start` at its end), and the writes of the clients that
/// never said `HELD` numbered by the spell they fell in (or the last one
/// before them; 0 before any).
fn with_spells(history: &History, spells: &[Spell], reporting: &BTreeSet<&str>) -> Vec<Event> {
    let mut out = history.events.clone();
    for s in spells {
        out.push(Event {
            time: s.start,
            host: s.client.clone(),
            kind: EventKind::Acquired {
                acq: s.acq,
                resource: s.resource.clone(),
                token: s.token.clone(),
                validity: s.end - s.start,
                valid_until: s.end,
                nodes: 0,
                fence: None,
            },
        });
        out.push(Event {
            time: s.end,
            host: s.client.clone(),
            kind: EventKind::ReleaseStart { acq: s.acq },
        });
    }
    for e in &mut out {
        if let EventKind::WriteApplied {
            client,
            acq,
            resource,
            ..
        }
        | EventKind::WriteRejected {
            client,
            acq,
            resource,
            ..
        } = &mut e.kind
        {
            if !reporting.contains(client.as_str()) {
                *acq = spells
                    .iter()
                    .rev()
                    .filter(|s| s.client == *client && s.resource == *resource && s.start <= e.time)
                    .map(|s| s.acq)
                    .next()
                    .unwrap_or(0);
            }
        }
    }
    renumber_sent(&mut out, reporting);
    // Stable: at one instant, a spell's end and start come after what the
    // history recorded then, in the order pushed (an end before a start).
    out.sort_by_key(|e| e.time);
    out
}

/// Each `write_sent` of a client that never said `HELD` takes the number
/// its write was given (its `seq` is unique among that client's writes).
fn renumber_sent(events: &mut [Event], reporting: &BTreeSet<&str>) {
    let mut acq_of: BTreeMap<(String, u32), u64> = BTreeMap::new();
    for e in events.iter() {
        if let EventKind::WriteApplied {
            client, acq, seq, ..
        }
        | EventKind::WriteRejected {
            client, acq, seq, ..
        } = &e.kind
        {
            acq_of.insert((client.clone(), *seq), *acq);
        }
    }
    for e in events.iter_mut() {
        if let EventKind::WriteSent { acq, seq } = &mut e.kind {
            if !reporting.contains(e.host.as_str()) {
                *acq = acq_of.get(&(e.host.clone(), *seq)).copied().unwrap_or(0);
            }
        }
    }
}

/// Gives each stale write its send time, from its `write_sent`.
fn send_times(stale: &mut [StaleWrite], events: &[Event]) {
    let sent: BTreeMap<(&str, u64, u32), Duration> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::WriteSent { acq, seq } => Some(((e.host.as_str(), acq, seq), e.time)),
            _ => None,
        })
        .collect();
    for w in stale {
        let key = (w.writer.0.as_str(), w.writer.1, w.seq);
        w.sent = sent.get(&key).copied();
    }
}

/// An acquisition as the stale-write rule sees it.
struct Acq {
    client: String,
    acq: u64,
    start: Duration,
}

/// The stale writes and the number of unprotected ones.
fn writes(events: &[Event], owners: &Owners) -> (Vec<StaleWrite>, u64) {
    // Per resource: every acquisition and every HELD (acquired, extended).
    let mut acqs: BTreeMap<String, Vec<Acq>> = BTreeMap::new();
    let mut helds: BTreeMap<String, Vec<(Duration, String)>> = BTreeMap::new();
    let mut resource_of: BTreeMap<(String, u64), String> = BTreeMap::new();
    let (mut stale, mut unprotected) = (Vec::new(), 0u64);
    let mut o = 0;
    // Per resource: its owner, and since when.
    let mut owner: BTreeMap<String, Option<(String, Duration)>> = BTreeMap::new();
    for e in events {
        while o < owners.len() && owners[o].0 <= e.time {
            let (t, resource, who) = &owners[o];
            let same = owner.get(resource).cloned().flatten().map(|(c, _)| c);
            let who = who.as_ref().map(|(c, _)| c.clone());
            if same != who {
                owner.insert(resource.clone(), who.map(|c| (c, *t)));
            }
            o += 1;
        }
        match &e.kind {
            EventKind::Acquired { acq, resource, .. } => {
                resource_of.insert((e.host.clone(), *acq), resource.clone());
                let a = Acq {
                    client: e.host.clone(),
                    acq: *acq,
                    start: e.time,
                };
                acqs.entry(resource.clone()).or_default().push(a);
                helds
                    .entry(resource.clone())
                    .or_default()
                    .push((e.time, e.host.clone()));
            }
            EventKind::Extended { acq, .. } => {
                if let Some(r) = resource_of.get(&(e.host.clone(), *acq)) {
                    helds
                        .entry(r.clone())
                        .or_default()
                        .push((e.time, e.host.clone()));
                }
            }
            EventKind::WriteApplied {
                client,
                acq,
                seq,
                fence,
                resource,
            } => {
                let none = Vec::new();
                let all = acqs.get(resource).unwrap_or(&none);
                let mine = all
                    .iter()
                    .rev()
                    .find(|a| a.client == *client && a.acq == *acq);
                let since = mine.map(|a| a.start);
                let owned_by = owner.get(resource).cloned().flatten();
                let first_other_held = helds.get(resource).and_then(|h| {
                    h.iter()
                        .find(|(t, c)| since.is_none_or(|s| *t > s) && c != client)
                });
                let other_held = first_other_held.map(|(t, _)| *t);
                let by_other = owned_by
                    .as_ref()
                    .filter(|(c, _)| c != client)
                    .map(|(_, t)| *t);
                if by_other.is_none() && other_held.is_none() {
                    if owned_by.is_none() {
                        unprotected += 1;
                    }
                    continue;
                }
                let superseded_at = [by_other, other_held].into_iter().flatten().min();
                let (landed_in, landed_in_start) = landed(all, client, owned_by.as_ref(), e.time);
                // Both come from what the history said by the write's instant.
                assert!(
                    superseded_at.is_some_and(|s| s <= e.time) && landed_in_start <= e.time,
                    "outside: a write of {client} applied at {:?}, superseded at {superseded_at:?} \
                     and landed in an acquisition at {landed_in_start:?}",
                    e.time
                );
                stale.push(StaleWrite {
                    resource: resource.clone(),
                    writer: (client.clone(), *acq),
                    seq: *seq,
                    fence: *fence,
                    acquired: since.unwrap_or_default(),
                    sent: None,
                    applied: e.time,
                    landed_in,
                    landed_in_start,
                    superseded_at: superseded_at.unwrap_or(e.time),
                    kind: StaleKind::InFlight,
                });
            }
            _ => {}
        }
    }
    (stale, unprotected)
}

/// The acquisition a stale write of `writer` applied at `t` landed in:
/// the owner's the servers show (its latest acquisition by then, or its
/// `acq=0` when it had said no `HELD` yet: its ownership began at `since`),
/// or else another client's latest acquisition.
fn landed(
    all: &[Acq],
    writer: &str,
    owned_by: Option<&(String, Duration)>,
    t: Duration,
) -> ((String, u64), Duration) {
    if let Some((owner, since)) = owned_by.filter(|(c, _)| c != writer) {
        let latest = all
            .iter()
            .rev()
            .find(|a| &a.client == owner && a.start <= t);
        return match latest {
            Some(a) => ((a.client.clone(), a.acq), a.start),
            None => ((owner.clone(), 0), *since),
        };
    }
    match all.iter().rev().find(|a| a.client != writer) {
        Some(a) => ((a.client.clone(), a.acq), a.start),
        None => ((String::new(), 0), t),
    }
}

/// Decides how each stale write got late, from the writer's hold (a
/// writer that never acquired had no hold: its writes were sent late).
fn classify(stale: &mut [StaleWrite], holds: &[Hold]) {
    for w in stale {
        let end = holds
            .iter()
            .find(|h| (&h.client, h.acq) == (&w.writer.0, w.writer.1))
            .map_or(Duration::ZERO, |h| h.end);
        w.kind = StaleKind::of(w.sent.unwrap_or(w.applied), w.superseded_at, end);
    }
}

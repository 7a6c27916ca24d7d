//! The lab's history: what its hosts did, in the order the lab saw it, on
//! the time since the run's clock started (one monotonic clock for every
//! host, read under the lock that appends, so the history is in time order;
//! the events recorded after their time, a `write_sent` and an expiry, are
//! put in their place).
//!
//! - the nodes' changes of a lock key's marks ([`redlock_history::keys`]),
//!   from their effects, as the simulation records them, with the client
//!   whose command made each (`by=`); at a restart, the lock keys the node
//!   came back with; and each key or member whose time ran out on its
//!   node's clock, at the instant it did ([`LabRecorder::expire_due`]: the
//!   node's own removal, later, adds nothing);
//! - what the drivers told the store: `LOCKKEY` (a `lock_key` event),
//!   `HELD` (the first opens an acquisition, `acquired`; the next ones while
//!   it is open extend it, `extended`), `RELEASED` (`release_start` then
//!   `released`), each at the time the driver's link read it (when it came
//!   through a link: a slow link moves no driver's word later), the writes
//!   (`write_applied`, `write_rejected`, at the time the store applied
//!   them, each in the writer's acquisition that had begun when it was
//!   sent, or its latest without a send time, and numbered within it;
//!   `acq=0`: it never said `HELD` before), each preceded by its
//!   `write_sent` for the writer at its send time, and what it got wrong
//!   (`store_error`);
//! - faults, failovers, clients that ended early: the engine's.

use super::clock::NodeTime;
use super::store::StoreEvent;
use bytes::Bytes;
use redlock_engine::aim::Aimer;
use redlock_engine::due::Due;
use redlock_history::keys::{self, key_events, NodeKeys};
use redlock_history::ownership::Ownership;
use redlock_history::{Event, EventKind, FaultEvent, History};
use redlock_scenario::Topology;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use std::time::Instant;

/// Where every host of one lab run records. Cheap to clone.
#[derive(Clone)]
pub(crate) struct LabRecorder {
    origin: Arc<std::sync::RwLock<Instant>>,
    state: Arc<Mutex<State>>,
}

struct State {
    events: Vec<Event>,
    /// Who owns what, followed as events come.
    ownership: Ownership,
    /// What each node holds of the lock keys, as its effects left it.
    keys: BTreeMap<String, NodeKeys>,
    /// Each node's clock, as the lab reads it, and when a fault last moved
    /// it.
    clocks: BTreeMap<String, (NodeTime, Duration)>,
    /// When each key of each node (or a member of it) was last set or
    /// extended: no expiry of it is recorded before.
    set_at: BTreeMap<(String, String), Duration>,
    /// The first time each client was seen owning a lock.
    first_owned: BTreeMap<String, Duration>,
    /// The clients the store has had a command from.
    heard: std::collections::BTreeSet<String>,
    /// The clients that said `READY`.
    ready: std::collections::BTreeSet<String>,
    /// The clients that used the lock: a `HELD`, `WRITE`, `RELEASED` or
    /// `FENCE`, or ownership seen.
    used: std::collections::BTreeSet<String>,
    /// Per client: what its `HELD`s opened.
    clients: BTreeMap<String, Acquisitions>,
    /// `aim = "lock"`: the aimed nemesis, following what the lab sees of
    /// the lock, and the faults it placed, for the run's loop to take.
    aimer: Option<Aimer>,
    placed: Vec<Due>,
    ttl: Duration,
    /// Resource → its owner, as the aimer was told.
    owned: BTreeMap<String, String>,
}

#[derive(Default)]
struct Acquisitions {
    /// The fencing token it took last (`FENCE`), for its next acquisition.
    fence: Option<u64>,
    /// That acquisition is open (no `RELEASED` yet).
    open: bool,
    /// When each acquisition began (its `HELD`'s send time, or read time
    /// without a link), in order.
    starts: Vec<(u64, Duration)>,
    /// Writes in each acquisition so far (0: before any).
    seqs: BTreeMap<u64, u32>,
}

impl Acquisitions {
    /// Its latest acquisition (0: none yet).
    fn latest(&self) -> u64 {
        self.starts.last().map_or(0, |(acq, _)| *acq)
    }

    /// The acquisition a write sent at `sent` belongs to: the last one
    /// begun by then (a write a slow link delivered after its writer took
    /// the lock again is still its old hold's); without a send time, the
    /// latest. Numbered within it.
    fn write_in(&mut self, sent: Option<Duration>) -> (u64, u32) {
        let acq = match sent {
            Some(t) => self
                .starts
                .iter()
                .rev()
                .find(|(_, start)| *start <= t)
                .map_or(0, |(acq, _)| *acq),
            None => self.latest(),
        };
        assert!(
            acq <= self.latest(),
            "a write in acquisition {acq}, past the latest {}",
            self.latest()
        );
        let seq = self.seqs.entry(acq).or_insert(0);
        *seq += 1;
        (acq, *seq)
    }
}

impl LabRecorder {
    /// A history that starts at `origin`, for clients of these resources
    /// (each is its own lock key until a driver says otherwise).
    pub(crate) fn new(
        origin: Instant,
        resources: &[String],
        topology: Topology,
        nodes: usize,
    ) -> LabRecorder {
        let state = State {
            events: Vec::new(),
            ownership: Ownership::new(topology, nodes).with_resources(resources),
            keys: BTreeMap::new(),
            clocks: BTreeMap::new(),
            set_at: BTreeMap::new(),
            first_owned: BTreeMap::new(),
            heard: Default::default(),
            ready: Default::default(),
            used: Default::default(),
            clients: BTreeMap::new(),
            aimer: None,
            placed: Vec::new(),
            ttl: Duration::ZERO,
            owned: BTreeMap::new(),
        };
        LabRecorder {
            origin: Arc::new(std::sync::RwLock::new(origin)),
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The time since the start.
    pub(crate) fn now(&self) -> Duration {
        self.origin().elapsed()
    }

    fn origin(&self) -> Instant {
        *self.origin.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The run starts now: what was recorded while it was being set up
    /// (real servers take a while to start and sync; clients connect and
    /// say `READY`) is at time 0.
    pub(crate) fn start_now(&self) {
        let mut state = self.lock();
        *self.origin.write().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        for e in &mut state.events {
            e.time = Duration::ZERO;
        }
        for t in state.first_owned.values_mut() {
            *t = Duration::ZERO;
        }
        for t in state.set_at.values_mut() {
            *t = Duration::ZERO;
        }
        for c in state.clocks.values_mut() {
            c.1 = Duration::ZERO;
        }
    }

    /// Whether `client` said `READY`.
    pub(crate) fn is_ready(&self, client: &str) -> bool {
        self.lock().ready.contains(client)
    }

    /// Whether `client` used the lock (a `HELD`, `WRITE`, `RELEASED` or
    /// `FENCE`, or ownership seen).
    pub(crate) fn used_lock(&self, client: &str) -> bool {
        let state = self.lock();
        state.used.contains(client) || state.first_owned.contains_key(client)
    }

    /// Records `kind` for `host` now.
    pub(crate) fn record(&self, host: &str, kind: EventKind) {
        let mut state = self.lock();
        let time = self.now();
        push(&mut state, time, host, kind);
    }

    /// A node's effects, made by `peer`'s command (a client's name; any
    /// other peer, or none, is the lab's own doing).
    pub(crate) fn node_effects(&self, node: &str, client: Option<&str>, effects: &[Vec<Bytes>]) {
        let mut state = self.lock();
        let time = self.now();
        effects_at(&mut state, time, node, client, effects);
    }

    /// [`LabRecorder::node_effects`] made at `time` (a real server's, as
    /// its observer read them: recorded in their place).
    pub(crate) fn node_effects_at(
        &self,
        time: Duration,
        node: &str,
        client: Option<&str>,
        effects: &[Vec<Bytes>],
    ) {
        effects_at(&mut self.lock(), time, node, client, effects);
    }

    /// `node` reads time on `clock` (its expiries are recorded by it).
    pub(crate) fn node_clock(&self, node: &str, clock: NodeTime) {
        let mut state = self.lock();
        let since = state.clocks.get(node).map_or(Duration::ZERO, |c| c.1);
        state.clocks.insert(node.to_string(), (clock, since));
    }

    /// Records, each at the instant it happened, every lock key and member
    /// whose time has run out on its node's clock since the last look. The
    /// lab's loop calls it every millisecond, and before it applies a
    /// fault (a clock fault then counts from its own instant).
    pub(crate) fn expire_due(&self) {
        let mut state = self.lock();
        let time = self.now();
        let nodes: Vec<String> = state.keys.keys().cloned().collect();
        for node in nodes {
            expire_node(&mut state, time, &node);
        }
    }

    /// A node came up holding what `rebuild` (the commands that rebuild
    /// its lock keys, from its disk) makes.
    pub(crate) fn node_up(&self, node: &str, keys: usize, rebuild: &[Vec<Bytes>]) {
        let mut state = self.lock();
        let time = self.now();
        push(&mut state, time, node, EventKind::NodeUp { keys });
        let lock_keys = state.ownership.lock_keys();
        let now = wall_of(&state, node);
        let (held, events) = keys::rebuilt(&lock_keys, rebuild, now);
        state.keys.insert(node.to_string(), held);
        for kind in events {
            push(&mut state, time, node, kind);
        }
        if let Some(a) = &mut state.aimer {
            a.node_down(node, false);
        }
    }

    /// A node lost its memory (a crash; its `crash` fault, recorded next,
    /// empties it in the ownership): the aimer stops aiming at it.
    pub(crate) fn node_down(&self, node: &str) {
        let mut state = self.lock();
        if let Some(a) = &mut state.aimer {
            a.node_down(node, true);
        }
    }

    /// The lock keys known now.
    pub(crate) fn lock_keys(&self) -> Vec<String> {
        self.lock().ownership.lock_keys()
    }

    /// What a driver did at the store; a write, with its `write_sent` at
    /// the time it was sent.
    pub(crate) fn store(&self, e: StoreEvent) {
        let mut state = self.lock();
        state.heard.insert(e.client().to_string());
        match &e {
            StoreEvent::Ready { client } => {
                // The store reports a second `READY` as an error.
                let first = state.ready.insert(client.clone());
                assert!(first, "{client}'s READY recorded twice");
            }
            StoreEvent::Held { client, .. }
            | StoreEvent::Write { client, .. }
            | StoreEvent::Released { client, .. }
            | StoreEvent::Fence { client, .. } => {
                state.used.insert(client.clone());
            }
            StoreEvent::LockKey { .. } | StoreEvent::Bad { .. } => {}
        }
        let time = self.now();
        let sent = e
            .sent()
            .map(|at| at.saturating_duration_since(self.origin()).min(time));
        let is_write = matches!(e, StoreEvent::Write { .. });
        for (host, kind) in store_events(&mut state, time, sent, e) {
            if let (
                Some(at),
                EventKind::WriteApplied {
                    client, acq, seq, ..
                }
                | EventKind::WriteRejected {
                    client, acq, seq, ..
                },
            ) = (sent, &kind)
            {
                let sent = EventKind::WriteSent {
                    acq: *acq,
                    seq: *seq,
                };
                push(&mut state, at, &client.clone(), sent);
            }
            // A driver's own word (`HELD`, `RELEASED`) at the time it said
            // it; a write where the store applied it.
            let at = match is_write {
                true => time,
                false => sent.unwrap_or(time),
            };
            push(&mut state, at, &host, kind);
        }
    }

    /// Aims the nemesis's faults at what the lab sees of the lock: each
    /// change of ownership is an acquisition (its validity `ttl`) or a
    /// release, each `HELD` while it holds an extension.
    pub(crate) fn aim(&self, aimer: Aimer, ttl: Duration) {
        let mut state = self.lock();
        assert!(
            state.aimer.is_none(),
            "the aimed nemesis set twice in a run"
        );
        state.aimer = Some(aimer);
        state.ttl = ttl;
    }

    /// The faults the aimed nemesis placed since the last call.
    pub(crate) fn take_placed(&self) -> Vec<Due> {
        std::mem::take(&mut self.lock().placed)
    }

    /// The first time the lab saw `client` own a lock, since the start.
    pub(crate) fn first_owned(&self, client: &str) -> Option<Duration> {
        self.lock().first_owned.get(client).copied()
    }

    /// Whether `client` has shown it runs: it sent the store a command,
    /// or the lab saw it own a lock.
    pub(crate) fn heard_from(&self, client: &str) -> bool {
        let state = self.lock();
        state.heard.contains(client) || state.first_owned.contains_key(client)
    }

    /// Everything recorded so far.
    pub(crate) fn history(&self) -> History {
        History {
            events: self.lock().events.clone(),
        }
    }
}

/// The history events of a node's effects, at `time`: first what ran out
/// on it before.
fn effects_at(
    state: &mut State,
    time: Duration,
    node: &str,
    client: Option<&str>,
    effects: &[Vec<Bytes>],
) {
    expire_node(state, time, node);
    let lock_keys = state.ownership.lock_keys();
    let now = wall_of(state, node);
    let held = state.keys.entry(node.to_string()).or_default();
    let kinds: Vec<EventKind> = effects
        .iter()
        .flat_map(|cmd| key_events(&lock_keys, held, cmd, client, now))
        .collect();
    for kind in kinds {
        push(state, time, node, kind);
    }
}

/// `node`'s clock now, in ms (the machine's, for a node with no clock of
/// its own yet).
fn wall_of(state: &State, node: &str) -> i64 {
    state
        .clocks
        .get(node)
        .map_or_else(|| NodeTime::System.wall_ms(), |(c, _)| c.wall_ms())
        .floor() as i64
}

/// Records what ran out on `node` by `time`, each at the instant its
/// node's clock passed it: back from now at the clock's rate, but never
/// before the clock last moved by a fault nor before the mark was last
/// set or extended.
fn expire_node(state: &mut State, time: Duration, node: &str) {
    let Some((clock, moved)) = state.clocks.get(node).cloned() else {
        return;
    };
    let Some(held) = state.keys.get_mut(node) else {
        return;
    };
    let wall = clock.wall_ms();
    if keys::next_expiry(held).is_none_or(|at| (at as f64) > wall) {
        return;
    }
    let gone = keys::expire(held, wall.floor() as i64);
    let rate = clock.rate().max(1e-9);
    for kind in gone {
        let EventKind::KeyExpired {
            key, expires_at, ..
        } = &kind
        else {
            unreachable!("keys::expire gives expiries only")
        };
        let late_ms = (wall - expires_at.unwrap_or(0) as f64).max(0.0) / rate;
        let set = state
            .set_at
            .get(&(node.to_string(), key.clone()))
            .copied()
            .unwrap_or_default();
        let at = time
            .saturating_sub(Duration::from_secs_f64(late_ms / 1e3))
            .max(moved)
            .max(set)
            .min(time);
        push(state, at, node, kind);
    }
}

/// Records `kind` at `time`, after every event recorded at or before it
/// (at the end, but for a `write_sent`).
fn push(state: &mut State, time: Duration, host: &str, kind: EventKind) {
    let e = Event {
        time,
        host: host.to_string(),
        kind,
    };
    follow_clocks_and_keys(state, &e);
    let changes = state.ownership.feed(&e);
    for (_, owner) in &changes {
        if let Some(c) = owner {
            state.first_owned.entry(c.clone()).or_insert(time);
        }
    }
    if state.aimer.is_some() {
        aim_at(state, &e, changes);
    }
    let at = state.events.partition_point(|x| x.time <= time);
    // In time order: after every event at or before it, before the rest.
    assert!(
        (at == 0 || state.events[at - 1].time <= time)
            && state.events.get(at).is_none_or(|x| x.time > time),
        "the history out of time order around {time:?}"
    );
    state.events.insert(at, e);
}

/// What `e` changes of the nodes' clocks and keys the recorder follows: a
/// clock fault moves a clock from its instant, a crash empties a node, a
/// mark set or extended cannot expire before.
fn follow_clocks_and_keys(state: &mut State, e: &Event) {
    match &e.kind {
        EventKind::Fault(
            FaultEvent::ClockJump { host, .. } | FaultEvent::ClockRate { host, .. },
        ) => {
            if let Some(c) = state.clocks.get_mut(host) {
                c.1 = c.1.max(e.time);
            }
        }
        EventKind::Fault(FaultEvent::Crash { host, .. }) => {
            state.keys.remove(host);
        }
        EventKind::KeySet { key, .. } | EventKind::KeyExtended { key, .. } => {
            let at = state
                .set_at
                .entry((e.host.clone(), key.clone()))
                .or_default();
            *at = (*at).max(e.time);
        }
        _ => {}
    }
}

/// What the aimed nemesis sees of `e`: node keys as they are, a change of
/// ownership as the new owner's acquisition and, when the old owner
/// removed its own key, its release; a `HELD` while holding as an
/// extension.
fn aim_at(state: &mut State, e: &Event, changes: Vec<(String, Option<String>)>) {
    let mut seen: Vec<(String, EventKind)> = Vec::new();
    match &e.kind {
        EventKind::KeySet { .. }
        | EventKind::KeyRemoved { .. }
        | EventKind::KeyExpired { .. }
        | EventKind::Extended { .. } => {
            seen.push((e.host.clone(), e.kind.clone()));
        }
        _ => {}
    }
    for (resource, owner) in changes {
        if let Some(old) = state.owned.remove(&resource) {
            // Its own removal is a release; a crash's or an expiry's is the
            // hold's end, which the aimer does not aim at.
            let released =
                matches!(&e.kind, EventKind::KeyRemoved { by: Some(c), .. } if *c == old);
            if released {
                seen.push((old.clone(), EventKind::ReleaseStart { acq: 0 }));
            }
            seen.push((old, EventKind::Released { acq: 0, nodes: 0 }));
        }
        if let Some(c) = owner {
            let token = state.ownership.token_of(&c, &resource).unwrap_or_default();
            let kind = EventKind::Acquired {
                acq: 0,
                resource: resource.clone(),
                token,
                validity: state.ttl,
                valid_until: e.time + state.ttl,
                nodes: 0,
                fence: None,
            };
            seen.push((c.clone(), kind));
            state.owned.insert(resource, c);
        }
    }
    let master = state.ownership.master().to_string();
    let Some(aimer) = &mut state.aimer else {
        return;
    };
    for (host, kind) in seen {
        let placed = aimer.on_event(e.time, &host, &kind, &master);
        state.placed.extend(placed);
    }
}

/// The history events of one store event, with their host.
/// `time` is when the store read it, `sent` when its link did.
fn store_events(
    state: &mut State,
    time: Duration,
    sent: Option<Duration>,
    e: StoreEvent,
) -> Vec<(String, EventKind)> {
    match e {
        StoreEvent::LockKey {
            client,
            resource,
            key,
            by_client,
        } => vec![(
            client,
            EventKind::LockKey {
                resource,
                key,
                by_client,
            },
        )],
        StoreEvent::Held {
            client,
            resource,
            valid_ms,
            ..
        } => {
            let said = sent.unwrap_or(time);
            let a = state.clients.entry(client.clone()).or_default();
            let validity = Duration::from_millis(valid_ms);
            let valid_until = said + validity;
            let kind = if a.open {
                assert!(a.latest() > 0, "{client}: an extension with no acquisition");
                EventKind::Extended {
                    acq: a.latest(),
                    validity,
                    valid_until,
                }
            } else {
                let acq = a.latest() + 1;
                a.open = true;
                a.starts.push((acq, said));
                // Numbered 1, 2, ... in the order the store read them.
                assert_eq!(
                    a.starts.len() as u64,
                    acq,
                    "{client}'s acquisitions misnumbered"
                );
                let token = state.ownership.token_of(&client, &resource);
                EventKind::Acquired {
                    acq,
                    resource,
                    token: token.unwrap_or_else(|| "-".to_string()),
                    validity,
                    valid_until,
                    nodes: 0,
                    fence: state.clients.get(&client).and_then(|a| a.fence),
                }
            };
            vec![(client, kind)]
        }
        StoreEvent::Released { client, .. } => {
            let a = state.clients.entry(client.clone()).or_default();
            if !a.open {
                return vec![];
            }
            a.open = false;
            let acq = a.latest();
            assert!(acq > 0, "{client}: a release with no acquisition");
            vec![
                (client.clone(), EventKind::ReleaseStart { acq }),
                (client, EventKind::Released { acq, nodes: 0 }),
            ]
        }
        StoreEvent::Write {
            client,
            resource,
            fence,
            applied,
            highest,
            ..
        } => {
            let a = state.clients.entry(client.clone()).or_default();
            let (acq, seq) = a.write_in(sent);
            let kind = match (applied, fence) {
                (false, Some(fence)) => EventKind::WriteRejected {
                    client,
                    acq,
                    seq,
                    fence,
                    highest,
                    resource,
                },
                _ => EventKind::WriteApplied {
                    client,
                    acq,
                    seq,
                    fence,
                    resource,
                },
            };
            vec![("store".to_string(), kind)]
        }
        StoreEvent::Bad { client, error } => vec![(client, EventKind::StoreError { error })],
        StoreEvent::Ready { client } => vec![(client, EventKind::Ready)],
        StoreEvent::Fence { client, token, .. } => {
            let a = state.clients.entry(client.clone()).or_default();
            // The store hands tokens out, and reports them, in order.
            assert!(
                a.fence.is_none_or(|f| f < token),
                "{client}'s fencing token {token} after {:?}",
                a.fence
            );
            a.fence = Some(token);
            vec![]
        }
    }
}

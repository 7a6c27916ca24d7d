//! The aimed nemesis (`[nemesis] aim = "lock"`): the same faults as the
//! blind nemesis, at the same rates and with the same durations, each placed
//! where it can hurt the lock.
//!
//! The blind plan ([`super::nemesis::plan`]) gives each fault its arming
//! time. An armed fault waits for the next lock event of the kind it aims at
//! and is then placed relative to it:
//!
//! - **acquired**: just after an acquisition (within 2% of the TTL), or
//!   near the end of the holder's validity (from 10% of the TTL before it to
//!   5% after);
//! - **release**: at once, while the release is on the wire;
//! - **lock call**: at once, while the acquisition is on the wire (an
//!   addition to the contract's list: a wall-clock step or a pause in the
//!   middle of an acquisition is what the elapsed-time measurement must
//!   survive); aimed at the caller and the nodes of the lock's holder;
//! - **extension**: when the holder's next extension is due (its last two
//!   lock events give the period), or near the end of the extended validity.
//!
//! 40% of the crashes (and kills) wait for an acquisition, the rest and
//! every other kind are spread evenly over the five events; crashes placed
//! at the same event take different nodes. A crash aimed just after an
//! acquisition goes at its instant (see [`Aimer::place`]).
//!
//! A fault whose kind of event does not come within two TTLs of its arming
//! (no client renews, say) takes the next lock event of any kind. The host is
//! one of those involved: a node holding the holder's key (the master with one
//! master), the holder itself, or for a partition, the holder and its nodes
//! against the rest (or the holder alone). What happens is decided only from
//! the history's lock events and the seed: nothing here knows which client
//! variant runs.

use super::due::{Due, Origin, Placed};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redlock_history::EventKind;
use redlock_scenario::{FaultAction, JumpTarget, Scenario, Target, Topology};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Which lock event an armed fault waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// Just after an acquisition.
    AfterAcquire,
    /// Near the end of a holder's validity.
    ValidityEnd,
    /// During a release.
    Release,
    /// During an extension.
    Extension,
    /// During an acquisition (a lock call in progress).
    Acquisition,
}

/// Where a fault of this kind is aimed. A crash hurts most just after an
/// acquisition (the node forgets a key meant to be valid for a whole TTL),
/// so half of the crashes go there; other kinds are spread evenly.
fn draw_point(action: &FaultAction, rng: &mut ChaCha8Rng) -> Point {
    let u: f64 = rng.random();
    let weights: [f64; 5] = match action {
        FaultAction::Crash { .. } => [0.4, 0.15, 0.15, 0.15, 0.15],
        FaultAction::Restart { .. }
        | FaultAction::Partition { .. }
        | FaultAction::Isolate { .. }
        | FaultAction::Heal
        | FaultAction::Pause { .. }
        | FaultAction::ClockJump { .. }
        | FaultAction::ClockRate { .. }
        | FaultAction::Latency { .. } => [0.2; 5],
    };
    let points = [
        Point::AfterAcquire,
        Point::ValidityEnd,
        Point::Release,
        Point::Extension,
        Point::Acquisition,
    ];
    let mut acc = 0.0;
    for (w, p) in weights.iter().zip(points) {
        acc += w;
        if u < acc {
            return p;
        }
    }
    Point::Acquisition
}

/// The history event (`EventKind::name`) a fault is placed at when the
/// event at hand is of `point`'s kind.
fn event_name(point: Point) -> &'static str {
    match point {
        Point::AfterAcquire | Point::ValidityEnd => "acquired",
        Point::Release => "release_start",
        Point::Extension => "extended",
        Point::Acquisition => "lock_call",
    }
}

/// A fault of the blind plan, armed at its time, waiting for its event.
#[derive(Clone, Debug)]
struct Armed {
    arm: Duration,
    action: FaultAction,
    point: Point,
    /// Random numbers drawn with the plan: where in its window the fault
    /// falls (`when`, in [0, 1)) and which of the candidate hosts it takes.
    when: f64,
    pick: u64,
}

/// A client's current hold, as the history shows it.
#[derive(Clone, Debug, Default)]
struct HoldSeen {
    token: String,
    resource: String,
    /// Global time of the acquisition or the last extension.
    last: Duration,
    /// The period between its last two lock events (acquired → extended).
    period: Option<Duration>,
    valid_until: Duration,
}

/// The aimed nemesis of one run.
#[derive(Debug)]
pub struct Aimer {
    armed: Vec<Armed>,
    ttl: Duration,
    single: bool,
    jump: JumpTarget,
    nodes: Vec<String>,
    clients: Vec<String>,
    holds: BTreeMap<String, HoldSeen>,
    /// (node, key) → the token the node holds for that key.
    keys: BTreeMap<(String, String), String>,
    down: BTreeSet<String>,
}

impl Aimer {
    /// Arms every fault of the blind `plan`; `rng` draws where each goes.
    pub(crate) fn new(
        s: &Scenario,
        plan: Vec<Due>,
        jump: JumpTarget,
        rng: &mut ChaCha8Rng,
    ) -> Self {
        let armed = plan
            .into_iter()
            .map(|d| {
                let point = draw_point(&d.action, rng);
                Armed {
                    arm: d.time,
                    action: d.action,
                    point,
                    when: rng.random(),
                    pick: rng.random(),
                }
            })
            .collect::<Vec<Armed>>();
        // `place_all` stops at the first fault not yet armed: it needs them
        // in time order, as the blind plan draws them.
        assert!(
            armed.windows(2).all(|w| w[0].arm <= w[1].arm),
            "aim: the blind plan's faults are not in time order"
        );
        Aimer {
            armed,
            ttl: s.max_ttl,
            single: s.cluster.topology == Topology::Single,
            jump,
            nodes: (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect(),
            clients: s.clients.iter().map(|c| c.name.clone()).collect(),
            holds: BTreeMap::new(),
            keys: BTreeMap::new(),
            down: BTreeSet::new(),
        }
    }

    /// A node went down (true) or came back (false); a crash loses its keys
    /// as far as aiming goes.
    pub fn node_down(&mut self, node: &str, down: bool) {
        if down {
            self.down.insert(node.to_string());
            self.keys.retain(|(n, _), _| n != node);
        } else {
            self.down.remove(node);
        }
    }

    /// Follows one history event; returns the faults it places.
    pub fn on_event(
        &mut self,
        time: Duration,
        host: &str,
        kind: &EventKind,
        master: &str,
    ) -> Vec<Due> {
        let point = match kind {
            EventKind::KeySet {
                key, shape, token, ..
            } => {
                // A key's first mark stands for it (a string's value is
                // replaced; a hash's or sorted set's later marks add).
                let at = (host.to_string(), key.clone());
                if *shape == redlock_history::keys::Shape::String || !self.keys.contains_key(&at) {
                    self.keys.insert(at, token.clone());
                }
                return Vec::new();
            }
            EventKind::KeyRemoved { key, mark, .. } | EventKind::KeyExpired { key, mark, .. } => {
                let at = (host.to_string(), key.clone());
                // The whole key, or the mark the aimer knows it by.
                let gone = match mark {
                    None => true,
                    Some((_, m)) => self.keys.get(&at) == Some(m),
                };
                if gone {
                    self.keys.remove(&at);
                }
                return Vec::new();
            }
            EventKind::Acquired {
                token,
                resource,
                valid_until,
                ..
            } => {
                self.holds.insert(
                    host.to_string(),
                    HoldSeen {
                        token: token.clone(),
                        resource: resource.clone(),
                        last: time,
                        period: None,
                        valid_until: *valid_until,
                    },
                );
                Point::AfterAcquire
            }
            EventKind::Extended { valid_until, .. } => {
                if let Some(h) = self.holds.get_mut(host) {
                    h.period = Some(time.saturating_sub(h.last));
                    h.last = time;
                    h.valid_until = *valid_until;
                }
                Point::Extension
            }
            EventKind::ReleaseStart { .. } => Point::Release,
            EventKind::LockCall { resource, .. } => {
                // The caller is not a holder yet: aim at it and at the nodes
                // of whoever holds the lock it asks for.
                let current = self
                    .holds
                    .values()
                    .find(|h| &h.resource == resource)
                    .cloned();
                let seen = current.unwrap_or(HoldSeen {
                    resource: resource.clone(),
                    ..HoldSeen::default()
                });
                return self.place_all(time, host, &seen, Point::Acquisition, master);
            }
            EventKind::Released { .. } | EventKind::Lost { .. } => {
                self.holds.remove(host);
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        let Some(hold) = self.holds.get(host).cloned() else {
            return Vec::new();
        };
        self.place_all(time, host, &hold, point, master)
    }

    /// Places every armed fault due by `time` that waits for `point` (or has
    /// waited two TTLs for its own kind of event), aimed at `host`'s `hold`.
    fn place_all(
        &mut self,
        time: Duration,
        host: &str,
        hold: &HoldSeen,
        point: Point,
        master: &str,
    ) -> Vec<Due> {
        let late = self.ttl * 2;
        let mut placed = Vec::new();
        let mut i = 0;
        while i < self.armed.len() {
            let a = &self.armed[i];
            // Armed in time order: none after this one is due yet.
            if a.arm > time {
                break;
            }
            let fits = match a.point {
                Point::AfterAcquire | Point::ValidityEnd => point == Point::AfterAcquire,
                p => p == point,
            };
            if a.arm <= time && (fits || time >= a.arm + late) {
                let a = self.armed.remove(i);
                // Out of its own kind of event: the event at hand decides.
                let at = if fits { a.point } else { point };
                let mut due = self.place(time, host, hold, a, at, master, &placed);
                due.placed = Some(Placed {
                    host: host.to_string(),
                    event: event_name(point),
                    time,
                });
                placed.push(due);
            } else {
                i += 1;
            }
        }
        placed
    }

    /// The time and host of armed fault `a`, aimed at `holder`'s `hold` from
    /// the event at `now`.
    #[allow(clippy::too_many_arguments)] // each is one fact of the moment; a struct would only rename them
    fn place(
        &self,
        now: Duration,
        holder: &str,
        hold: &HoldSeen,
        a: Armed,
        at: Point,
        master: &str,
        placed: &[Due],
    ) -> Due {
        // A crash just after an acquisition goes at its instant: the
        // restart race's window (from the node's return to the end of the
        // holder's validity) is what the crash's delay leaves of the TTL, a
        // few hundredths of it near the safe restart delay, and any later
        // crash would eat it.
        let crash = matches!(a.action, FaultAction::Crash { .. });
        let when = if crash && at == Point::AfterAcquire {
            0.0
        } else {
            a.when
        };
        let time = self.aimed_time(now, hold, when, at);
        let (key_nodes, involved) = self.involved(hold, master);
        let pick = |from: &[String]| from[(a.pick % from.len() as u64) as usize].clone();
        let action = match a.action {
            FaultAction::Crash {
                host,
                restart,
                kill,
            } => FaultAction::Crash {
                host: match host {
                    Target::Master => Target::Master,
                    Target::Host(_) => Target::Host(pick(&uncrashed(&involved, placed))),
                },
                restart,
                kill,
            },
            FaultAction::Pause { for_, .. } => {
                let mut hosts = vec![holder.to_string()];
                hosts.extend(involved.iter().cloned());
                FaultAction::Pause {
                    host: Target::Host(pick(&hosts)),
                    for_,
                }
            }
            FaultAction::ClockJump { by_ms, .. } => {
                let hosts: Vec<String> = match self.jump {
                    JumpTarget::Node => involved.clone(),
                    JumpTarget::Client => vec![holder.to_string()],
                    JumpTarget::Any => std::iter::once(holder.to_string())
                        .chain(involved.iter().cloned())
                        .collect(),
                };
                FaultAction::ClockJump {
                    host: Target::Host(pick(&hosts)),
                    by_ms,
                }
            }
            FaultAction::Partition { for_, oneway, .. } => {
                let sides = self.sides(holder, &key_nodes, master, a.pick);
                FaultAction::Partition {
                    sides,
                    oneway,
                    for_,
                }
            }
            // The nemesis aims only the four kinds above.
            other @ (FaultAction::Restart { .. }
            | FaultAction::Isolate { .. }
            | FaultAction::Heal
            | FaultAction::ClockRate { .. }
            | FaultAction::Latency { .. }) => other,
        };
        Due {
            time,
            action,
            origin: Origin::Nemesis,
            placed: None,
        }
    }

    /// When a fault aimed at `at` of `hold` falls, from the event at `now`
    /// (never before it); `when` in [0, 1) places it in its window.
    fn aimed_time(&self, now: Duration, hold: &HoldSeen, when: f64, at: Point) -> Duration {
        let ttl = self.ttl;
        match at {
            Point::AfterAcquire => now + ttl.mul_f64(0.02 * when),
            Point::ValidityEnd => {
                (hold.valid_until + ttl.mul_f64(0.15 * when)).saturating_sub(ttl.mul_f64(0.10))
            }
            Point::Release | Point::Acquisition => now,
            Point::Extension => {
                match hold.period {
                    // Just before to just after the next extension is due.
                    Some(p) => (hold.last + p + ttl.mul_f64(0.05 * when))
                        .saturating_sub(ttl.mul_f64(0.025)),
                    None => (hold.valid_until + ttl.mul_f64(0.15 * when))
                        .saturating_sub(ttl.mul_f64(0.10)),
                }
            }
        }
        .max(now)
    }

    /// The up nodes holding `hold`'s key, and the nodes a fault aimed at
    /// the hold involves: those, else the master (`single`: always), else
    /// any up node, else any node.
    fn involved(&self, hold: &HoldSeen, master: &str) -> (Vec<String>, Vec<String>) {
        let key_nodes: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| !self.down.contains(*n))
            .filter(|n| self.keys.get(&((*n).clone(), hold.resource.clone())) == Some(&hold.token))
            .cloned()
            .collect();
        let up: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| !self.down.contains(*n))
            .cloned()
            .collect();
        let involved: Vec<String> = if self.single {
            vec![master.to_string()]
        } else if !key_nodes.is_empty() {
            key_nodes.clone()
        } else if !up.is_empty() {
            up
        } else {
            self.nodes.clone()
        };
        // A fault aimed at the hold picks its host from these.
        assert!(
            !involved.is_empty(),
            "aim: no node involved in {}'s hold of {}",
            hold.token,
            hold.resource
        );
        (key_nodes, involved)
    }

    /// A partition aimed at `holder`: with an even pick, the holder and the
    /// nodes holding its key against every other host (the other clients
    /// see only the free nodes); with an odd one, the holder alone.
    fn sides(
        &self,
        holder: &str,
        key_nodes: &[String],
        master: &str,
        pick: u64,
    ) -> Vec<Vec<String>> {
        let mut mine: Vec<String> = vec![holder.to_string()];
        if pick.is_multiple_of(2) {
            if self.single {
                mine.push(master.to_string());
            } else {
                mine.extend(key_nodes.iter().cloned());
            }
        }
        // With one master, the sentinel goes with the rest: cut off from
        // the master, it fails over to a replica.
        let sentinel = self.single.then(|| "sentinel".to_string());
        let mut rest: Vec<String> = self
            .nodes
            .iter()
            .chain(&self.clients)
            .chain(sentinel.iter())
            .filter(|h| !mine.contains(h))
            .cloned()
            .collect();
        if rest.is_empty() {
            rest = self
                .clients
                .iter()
                .filter(|c| *c != holder)
                .cloned()
                .collect();
        }
        mine.sort();
        rest.sort();
        assert!(
            !mine.iter().any(|h| rest.contains(h)),
            "aim: a partition with a host on both sides: {mine:?} against {rest:?}"
        );
        vec![mine, rest]
    }
}

/// The nodes of `involved` no crash placed at the same event took yet
/// (crashes placed together take different nodes), or all of them when
/// every one was taken.
fn uncrashed(involved: &[String], placed: &[Due]) -> Vec<String> {
    let crashed: Vec<&Target> = placed
        .iter()
        .filter_map(|d| match &d.action {
            FaultAction::Crash { host, .. } => Some(host),
            FaultAction::Restart { .. }
            | FaultAction::Partition { .. }
            | FaultAction::Isolate { .. }
            | FaultAction::Heal
            | FaultAction::Pause { .. }
            | FaultAction::ClockJump { .. }
            | FaultAction::ClockRate { .. }
            | FaultAction::Latency { .. } => None,
        })
        .collect();
    let fresh: Vec<String> = involved
        .iter()
        .filter(|n| !crashed.contains(&&Target::Host((*n).clone())))
        .cloned()
        .collect();
    if fresh.is_empty() {
        involved.to_vec()
    } else {
        fresh
    }
}

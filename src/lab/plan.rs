//! The faults of one lab run, those to come and those in progress: the
//! file's `[[faults]]` due at a time or waiting for `after =
//! "cN:acquired"`, the blind nemesis's plan drawn from the seed (or the
//! aimed one, [`aimer`]), the timers that end faults, the nodes down and
//! the hosts paused. [`super::faults`] applies them.

use crate::scenario::{Aim, FaultAction, Scenario, Trigger};
use crate::sim::aim::Aimer;
use crate::sim::due::{Due, Origin};
use crate::sim::workload::rng_for;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::time::Duration;

/// Something to do later.
#[derive(Clone, Debug)]
pub enum Timer {
    /// Restart a node, if it is still down from that crash (id).
    Restart(String, u64),
    /// Heal the cuts of fault `id`.
    Clear(u64),
    /// Give a slowed pair back the network's latency (fault id).
    Restore(String, String, u64),
    /// End a pause, unless a longer one runs on.
    Resume(String),
}

/// The faults of one run, those done and those to come.
pub struct Plan {
    pub(super) queue: Vec<Due>,
    /// `(client, at, action, index)`: waiting for the client's first ownership.
    pub(super) waiting: Vec<(String, Duration, FaultAction, usize)>,
    pub(super) timers: BTreeMap<(Duration, u64), Timer>,
    /// Nodes down, with the id of their crash.
    pub(super) down: BTreeMap<String, u64>,
    /// Hosts paused, until when.
    pub(super) paused: BTreeMap<String, Duration>,
    pub(super) next_id: u64,
    pub(super) rng: ChaCha8Rng,
}

impl Plan {
    /// The file's faults and a blind nemesis's plan (an aimed one's is
    /// [`aimer`]'s). The scenario was checked for the lab
    /// ([`super::refuse`]): triggers are `acquired`.
    pub fn new(s: &Scenario, seed: u64) -> Plan {
        let mut queue = Vec::new();
        let mut waiting = Vec::new();
        for (index, f) in s.faults.iter().enumerate() {
            match &f.after {
                Trigger::Acquired(c) => waiting.push((c.clone(), f.at, f.action.clone(), index)),
                _ => queue.push(Due {
                    time: f.at,
                    action: f.action.clone(),
                    origin: Origin::File(index),
                }),
            }
        }
        if let Some(n) = s.nemesis.as_ref().filter(|n| n.aim == Aim::Random) {
            let mut rng = rng_for(seed, "world", "nemesis");
            queue.extend(crate::sim::nemesis::plan(s, n, &mut rng));
        }
        queue.sort_by_key(|d| d.time);
        Plan {
            queue,
            waiting,
            timers: BTreeMap::new(),
            down: BTreeMap::new(),
            paused: BTreeMap::new(),
            next_id: 0,
            rng: rng_for(seed, "world", "faults"),
        }
    }

    /// Keeps the faults an aimed nemesis placed.
    pub fn add_placed(&mut self, placed: Vec<Due>) {
        self.queue.extend(placed);
    }

    pub(super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub(super) fn after(&mut self, at: Duration, timer: Timer) {
        let id = self.id();
        self.timers.insert((at, id), timer);
    }
}

/// The aimed nemesis of `s` (`aim = "lock"`), as the simulation draws it.
pub fn aimer(s: &Scenario, seed: u64) -> Option<Aimer> {
    let n = s.nemesis.as_ref().filter(|n| n.aim == Aim::Lock)?;
    let plan = crate::sim::nemesis::plan(s, n, &mut rng_for(seed, "world", "nemesis"));
    let mut rng = rng_for(seed, "world", "aim");
    Some(Aimer::new(s, plan, n.clock_jump_target, &mut rng))
}

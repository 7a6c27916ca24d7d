//! The faults of one lab run, those to come and those in progress: the
//! file's `[[faults]]` due at a time or waiting for `after =
//! "cN:acquired"`, the blind nemesis's plan drawn from the seed (or the
//! aimed one), the timers that end faults, the nodes down and
//! the hosts paused. [`super::faults`] applies them.

use crate::scenario::Scenario;
use crate::sim::aim::Aimer;
use crate::sim::context::Waiting;
use crate::sim::due::Due;
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
    /// Waiting for their trigger: the client's first ownership.
    pub(super) waiting: Vec<Waiting>,
    pub(super) timers: BTreeMap<(Duration, u64), Timer>,
    /// Nodes down, with the id of their crash.
    pub(super) down: BTreeMap<String, u64>,
    /// Hosts paused, until when.
    pub(super) paused: BTreeMap<String, Duration>,
    pub(super) next_id: u64,
    pub(super) rng: ChaCha8Rng,
}

impl Plan {
    /// The run's faults as the simulation draws them from the seed
    /// ([`crate::sim::fault_plan`]), and the aimed nemesis, when `aim =
    /// "lock"`. The scenario was checked for the lab ([`super::refuse`]):
    /// triggers are `acquired`.
    pub fn new(s: &Scenario, seed: u64) -> (Plan, Option<Aimer>) {
        let (queue, waiting, aimer) = crate::sim::fault_plan(s, seed);
        let plan = Plan {
            queue,
            waiting,
            timers: BTreeMap::new(),
            down: BTreeMap::new(),
            paused: BTreeMap::new(),
            next_id: 0,
            rng: rng_for(seed, "world", "faults"),
        };
        (plan, aimer)
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

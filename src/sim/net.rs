//! The network's fault state: which directed links are cut and which are
//! held, and why, applied to turmoil as transitions.
//!
//! Several faults can cut the same link (a partition, an isolation, a crash);
//! a link heals when its last cause goes. turmoil keeps one state machine per
//! host pair in which `hold` and `partition` overwrite each other, so this
//! module owns the wanted state of each direction and issues only the calls
//! that move turmoil from what it has to what is wanted: cut beats held beats
//! healthy. A cut drops what is in flight (turmoil's TCP then breaks, as a
//! real stream would after a partition); a release delivers what was held.
//! Pauses do not hold links (a paused host's messages already on the wire
//! arrive on time): they live in the host's clock and sockets, see
//! [`super::pause`].

use std::collections::{BTreeMap, BTreeSet};
use turmoil::Sim;

/// Why a link is down: a fault's id and kind.
pub type Cause = (u64, &'static str);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Link {
    Healthy,
    Held,
    Cut,
}

/// Wanted link state, per directed pair of hosts.
#[derive(Default)]
pub struct Net {
    cuts: BTreeMap<(String, String), BTreeSet<Cause>>,
    holds: BTreeMap<(String, String), BTreeSet<Cause>>,
    /// What turmoil has now, per unordered pair (a < b): (a→b, b→a).
    applied: BTreeMap<(String, String), (Link, Link)>,
}

impl Net {
    pub fn cut(&mut self, from: &str, to: &str, cause: Cause) {
        self.cuts
            .entry((from.into(), to.into()))
            .or_default()
            .insert(cause);
    }

    pub fn hold(&mut self, a: &str, b: &str, cause: Cause) {
        for (x, y) in [(a, b), (b, a)] {
            self.holds
                .entry((x.into(), y.into()))
                .or_default()
                .insert(cause);
        }
    }

    /// Removes every cut and hold with this cause id.
    pub fn clear(&mut self, id: u64) {
        for set in self.cuts.values_mut().chain(self.holds.values_mut()) {
            set.retain(|(i, _)| *i != id);
        }
    }

    /// Removes every cut whose cause kind is in `kinds`.
    pub fn clear_kinds(&mut self, kinds: &[&str]) {
        for set in self.cuts.values_mut() {
            set.retain(|(_, k)| !kinds.contains(k));
        }
    }

    fn wanted(&self, from: &str, to: &str) -> Link {
        let key = (from.to_string(), to.to_string());
        if self.cuts.get(&key).is_some_and(|s| !s.is_empty()) {
            Link::Cut
        } else if self.holds.get(&key).is_some_and(|s| !s.is_empty()) {
            Link::Held
        } else {
            Link::Healthy
        }
    }

    /// Is the directed link `from → to` cut?
    pub fn is_cut(&self, from: &str, to: &str) -> bool {
        self.wanted(from, to) == Link::Cut
    }

    /// Brings turmoil's links between `hosts` to the wanted state.
    pub fn apply(&mut self, sim: &mut Sim<'_>, hosts: &[String]) {
        for (i, a) in hosts.iter().enumerate() {
            for b in &hosts[i + 1..] {
                let want = (self.wanted(a, b), self.wanted(b, a));
                let key = (a.clone(), b.clone());
                let have = self
                    .applied
                    .get(&key)
                    .copied()
                    .unwrap_or((Link::Healthy, Link::Healthy));
                if want != have {
                    transition(sim, a, b, have, want);
                    self.applied.insert(key, want);
                }
            }
        }
        let cut = self
            .cuts
            .iter()
            .filter(|(_, causes)| !causes.is_empty())
            .map(|(link, _)| link.clone())
            .collect();
        super::sockets::set_cut(cut);
    }
}

fn transition(sim: &mut Sim<'_>, a: &str, b: &str, have: (Link, Link), want: (Link, Link)) {
    let any_cut = want.0 == Link::Cut || want.1 == Link::Cut;
    let was_held = have.0 == Link::Held || have.1 == Link::Held;
    if any_cut {
        // Start from healthy, then cut the wanted directions (a held
        // direction beside a cut one is cut too: turmoil cannot mix them).
        if was_held {
            sim.release(a, b);
        }
        sim.repair(a, b);
        if want.0 == Link::Cut && want.1 == Link::Cut
            || want.0 == Link::Held
            || want.1 == Link::Held
        {
            sim.partition(a, b);
        } else if want.0 == Link::Cut {
            sim.partition_oneway(a, b);
        } else {
            sim.partition_oneway(b, a);
        }
    } else if want.0 == Link::Held || want.1 == Link::Held {
        sim.repair(a, b);
        sim.hold(a, b);
    } else if was_held {
        sim.release(a, b);
    } else {
        sim.repair(a, b);
    }
}

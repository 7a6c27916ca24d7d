//! The network's fault state: which directed links are cut, and why,
//! applied to turmoil as transitions.
//!
//! Several faults can cut the same link (a partition, an isolation, a crash);
//! a link heals when its last cause goes. turmoil keeps one state machine per
//! host pair, so this module owns the wanted state of each direction and
//! issues only the calls that move turmoil from what it has to what is
//! wanted. A cut drops what is in flight (turmoil's TCP then breaks, as a
//! real stream would after a partition). The cut links are published to
//! [`super::sockets`], which refuses connects across them.
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
    Cut,
}

/// Wanted link state, per directed pair of hosts.
#[derive(Default)]
pub struct Net {
    cuts: BTreeMap<(String, String), BTreeSet<Cause>>,
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

    /// Removes every cut with this cause id.
    pub fn clear(&mut self, id: u64) {
        for set in self.cuts.values_mut() {
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
                    transition(sim, a, b, want);
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

fn transition(sim: &mut Sim<'_>, a: &str, b: &str, want: (Link, Link)) {
    // Start from healthy, then cut the wanted directions.
    sim.repair(a, b);
    match want {
        (Link::Cut, Link::Cut) => sim.partition(a, b),
        (Link::Cut, Link::Healthy) => sim.partition_oneway(a, b),
        (Link::Healthy, Link::Cut) => sim.partition_oneway(b, a),
        (Link::Healthy, Link::Healthy) => {}
    }
}

//! The network's fault state: which directed links are cut, and why,
//! applied to turmoil as transitions.
//!
//! Several faults can cut the same link (a partition, an isolation, a crash);
//! a link heals when its last cause goes. turmoil keeps one state machine per
//! host pair, so this module owns the wanted state of each direction and
//! issues only the calls that move turmoil from what it has to what is
//! wanted.
//!
//! A partition or an isolation *holds* a link: what is in flight and what is
//! sent meanwhile waits, and arrives in order when the link heals, as TCP
//! retransmits it (a connect across it waits for its own timeout). A crash
//! *drops* the crashed node's links: what was in flight to or from it is
//! lost with the power. Pauses do not touch links (a paused host's messages
//! already on the wire arrive on time): they live in the host's clock and
//! sockets, see [`super::pause`].

use std::collections::{BTreeMap, BTreeSet};
use turmoil::Sim;

/// Why a link is down: a fault's id and kind (`"crash"` drops the link,
/// anything else holds it).
pub type Cause = (u64, &'static str);

/// The state of one direction of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Link {
    Healthy,
    /// Carries nothing; keeps what it was given, to deliver on the heal.
    Held,
    /// Carries nothing; loses what it was given.
    Dropped,
}

/// Wanted link state, per directed pair of hosts.
#[derive(Default)]
pub struct Net {
    cuts: BTreeMap<(String, String), BTreeSet<Cause>>,
    /// What turmoil has now, per directed pair (absent: healthy).
    applied: BTreeMap<(String, String), Link>,
}

impl Net {
    pub fn cut(&mut self, from: &str, to: &str, cause: Cause) {
        self.cuts
            .entry((from.into(), to.into()))
            .or_default()
            .insert(cause);
    }

    /// Cuts `host` off from each of `hosts` but itself, both ways.
    pub fn cut_off(&mut self, host: &str, hosts: &[String], cause: Cause) {
        for o in hosts.iter().filter(|h| *h != host) {
            self.cut(host, o, cause);
            self.cut(o, host, cause);
        }
    }

    /// Cuts every link between two of `sides` (only side 1 -> side 2 when
    /// `oneway`).
    pub fn cut_sides(&mut self, sides: &[Vec<String>], oneway: bool, cause: Cause) {
        for (i, a_side) in sides.iter().enumerate() {
            for b_side in &sides[i + 1..] {
                for (a, b) in a_side
                    .iter()
                    .flat_map(|a| b_side.iter().map(move |b| (a, b)))
                {
                    self.cut(a, b, cause);
                    if !oneway {
                        self.cut(b, a, cause);
                    }
                }
            }
        }
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

    /// Notes that a host held `from -> to` itself (a fault triggered in the
    /// middle of a step, see [`super::context::Context::record_at`]), so
    /// that the next [`Net::apply`] brings it to the wanted state.
    pub fn held_by_host(&mut self, from: &str, to: &str) {
        self.applied.insert((from.into(), to.into()), Link::Held);
    }

    /// What `from -> to` should be, by the cuts on it now.
    pub fn wanted(&self, from: &str, to: &str) -> Link {
        let key = (from.to_string(), to.to_string());
        match self.cuts.get(&key) {
            Some(s) if s.iter().any(|(_, k)| *k == "crash") => Link::Dropped,
            Some(s) if !s.is_empty() => Link::Held,
            _ => Link::Healthy,
        }
    }

    /// Brings turmoil's links between `hosts` to the wanted state.
    pub fn apply(&mut self, sim: &mut Sim<'_>, hosts: &[String]) {
        for from in hosts {
            for to in hosts.iter().filter(|h| *h != from) {
                let want = self.wanted(from, to);
                let key = (from.clone(), to.clone());
                let have = self.applied.get(&key).copied().unwrap_or(Link::Healthy);
                if want != have {
                    transition(sim, from, to, have, want);
                }
                if want == Link::Healthy {
                    self.applied.remove(&key);
                } else {
                    self.applied.insert(key, want);
                }
            }
        }
    }
}

/// Moves the direction `from -> to` from `have` to `want` (which differ).
fn transition(sim: &mut Sim<'_>, from: &str, to: &str, have: Link, want: Link) {
    match want {
        Link::Healthy if have == Link::Held => sim.release_oneway(from, to),
        Link::Healthy => sim.repair_oneway(from, to),
        Link::Held => {
            if have == Link::Dropped {
                sim.repair_oneway(from, to);
            }
            sim.hold_oneway(from, to);
        }
        // Loses what is held or in flight from `from`.
        Link::Dropped => sim.partition_oneway(from, to),
    }
}

//! The network's fault state, in both worlds: which directed links are
//! cut, and why. Several faults can cut the same link (a partition, an
//! isolation, a crash); a link heals when its last cause goes. Each world
//! brings its links to the wanted state: the simulation's turmoil by
//! transitions (`sim::links`), the lab's forwarders by their settings.
//!
//! A partition or an isolation *holds* a link: what is in flight and what is
//! sent meanwhile waits, and arrives in order when the link heals, as TCP
//! retransmits it (a connect across it waits for its own timeout). A crash
//! *drops* the crashed node's links: what was in flight to or from it is
//! lost with the power. Pauses do not touch links (a paused host's messages
//! already on the wire arrive on time): they live in the host's clock and
//! sockets in the simulation, in its process or gate in the lab.

use std::collections::{BTreeMap, BTreeSet};

/// Why a link is down: a fault's id and kind (`"crash"` drops the link,
/// anything else holds it).
pub type Cause = (u64, &'static str);

/// The state of one direction of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkState {
    Healthy,
    /// Carries nothing; keeps what it was given, to deliver on the heal.
    Held,
    /// Carries nothing; loses what it was given.
    Dropped,
}

/// Wanted link state, per directed pair of the world's hosts.
#[derive(Default)]
pub struct Cuts {
    hosts: Vec<String>,
    cuts: BTreeMap<(String, String), BTreeSet<Cause>>,
}

impl Cuts {
    /// No link of `hosts` cut.
    pub(crate) fn new(hosts: Vec<String>) -> Cuts {
        Cuts {
            hosts,
            cuts: BTreeMap::new(),
        }
    }

    /// The world's hosts, in the scenario's order.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    pub(crate) fn cut(&mut self, from: &str, to: &str, cause: Cause) {
        assert_ne!(
            from, to,
            "cuts: a link from {from} to itself cut ({cause:?})"
        );
        self.cuts
            .entry((from.into(), to.into()))
            .or_default()
            .insert(cause);
    }

    /// Cuts `host` off from every other host, both ways.
    pub fn cut_off(&mut self, host: &str, cause: Cause) {
        assert!(
            self.hosts.iter().any(|h| h == host),
            "cuts: {host}, not a host of the world, cut off ({cause:?})"
        );
        let hosts = std::mem::take(&mut self.hosts);
        for o in hosts.iter().filter(|h| *h != host) {
            self.cut(host, o, cause);
            self.cut(o, host, cause);
        }
        self.hosts = hosts;
    }

    /// Cuts every link between two of `sides` (only side 1 -> side 2 when
    /// `oneway`).
    pub(crate) fn cut_sides(&mut self, sides: &[Vec<String>], oneway: bool, cause: Cause) {
        // The parser, the nemesis and the aimer give disjoint sides of the
        // world's hosts.
        let mut seen: BTreeSet<&String> = BTreeSet::new();
        for h in sides.iter().flatten() {
            assert!(
                self.hosts.contains(h) && seen.insert(h),
                "cuts: a partition {sides:?} with {h} twice or not a host of the world"
            );
        }
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
    pub(crate) fn clear_kinds(&mut self, kinds: &[&str]) {
        for set in self.cuts.values_mut() {
            set.retain(|(_, k)| !kinds.contains(k));
        }
    }

    /// What `from -> to` should be, by the cuts on it now.
    pub fn wanted(&self, from: &str, to: &str) -> LinkState {
        assert_ne!(from, to, "cuts: the state of a link from {from} to itself");
        let key = (from.to_string(), to.to_string());
        match self.cuts.get(&key) {
            Some(s) if s.iter().any(|(_, k)| *k == "crash") => LinkState::Dropped,
            Some(s) if !s.is_empty() => LinkState::Held,
            _ => LinkState::Healthy,
        }
    }
}

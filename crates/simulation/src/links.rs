//! The simulation's links: turmoil brought to the wanted state of the
//! fault engine's [`Cuts`], issuing only the calls that move each directed
//! pair from what turmoil has to what is wanted (turmoil keeps one state
//! machine per host pair).

use redlock_engine::cuts::{Cuts, LinkState};
use std::collections::BTreeMap;
use turmoil::Sim;

/// What turmoil has now, per directed pair (absent: healthy).
#[derive(Default)]
pub(crate) struct TurmoilLinks {
    applied: BTreeMap<(String, String), LinkState>,
}

impl TurmoilLinks {
    /// Notes that a host held `from -> to` itself (a fault triggered in the
    /// middle of a step, see [`super::context::Context::record_at`]), so
    /// that the next [`TurmoilLinks::apply`] brings it to the wanted state.
    pub(crate) fn held_by_host(&mut self, from: &str, to: &str) {
        self.applied
            .insert((from.into(), to.into()), LinkState::Held);
    }

    /// Brings turmoil's links between the hosts to the wanted state.
    pub(crate) fn apply(&mut self, sim: &mut Sim<'_>, cuts: &Cuts) {
        let hosts = cuts.hosts();
        for from in hosts {
            for to in hosts.iter().filter(|h| *h != from) {
                let want = cuts.wanted(from, to);
                let key = (from.clone(), to.clone());
                let have = self
                    .applied
                    .get(&key)
                    .copied()
                    .unwrap_or(LinkState::Healthy);
                if want != have {
                    transition(sim, from, to, have, want);
                }
                if want == LinkState::Healthy {
                    self.applied.remove(&key);
                } else {
                    self.applied.insert(key, want);
                }
            }
        }
    }
}

/// Moves the direction `from -> to` from `have` to `want` (which differ).
fn transition(sim: &mut Sim<'_>, from: &str, to: &str, have: LinkState, want: LinkState) {
    assert_ne!(
        have, want,
        "sim: a transition of {from} -> {to} to where it is"
    );
    match want {
        LinkState::Healthy if have == LinkState::Held => sim.release_oneway(from, to),
        LinkState::Healthy => sim.repair_oneway(from, to),
        LinkState::Held => {
            if have == LinkState::Dropped {
                sim.repair_oneway(from, to);
            }
            sim.hold_oneway(from, to);
        }
        // Loses what is held or in flight from `from`.
        LinkState::Dropped => sim.partition_oneway(from, to),
    }
}

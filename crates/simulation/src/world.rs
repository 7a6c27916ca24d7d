//! What a fault does to the simulation's hosts ([`engine::World`]): a
//! crash is a power loss (cut off, then stopped, the disk losing what was
//! not synced) or, with `kill`, a process's death on a machine that stays
//! up; a restart boots the node's software again; cuts and latencies are
//! turmoil's links; a pause and a clock fault act on the host's clock.

use super::context::Context;
use super::links::TurmoilLinks;
use redlock_engine::cuts::{Cause, Cuts};
use redlock_engine::due::on_ms;
use redlock_engine::{self as engine, PauseEnd};
use redlock_history::EventKind;
use redlock_node::persistence::SharedDisk;
use redlock_scenario::{DurRange, MAX_CLOCK_RATE, MIN_CLOCK_RATE};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use turmoil::Sim;

/// The simulation's hosts, as the faults act on them.
pub(crate) struct SimWorld<'a> {
    pub(crate) sim: Sim<'a>,
    pub(crate) ctx: Arc<Context>,
    pub(crate) links: TurmoilLinks,
    /// Each node's disk, outside its host: a crash loses what is unsynced.
    pub(crate) disks: BTreeMap<String, SharedDisk>,
    /// The network's latency, which a slowed link gets back.
    pub(crate) latency: DurRange,
}

impl engine::World for SimWorld<'_> {
    fn instant(&self, due: Duration) -> Duration {
        due
    }

    fn timer_due(&self, at: Duration) -> Duration {
        on_ms(at)
    }

    fn master(&self) -> String {
        self.ctx.master()
    }

    fn record(&self, at: Duration, kind: EventKind) {
        self.ctx.record_at(at, "driver", kind);
    }

    fn sync_links(&mut self, cuts: &Cuts) {
        self.links.apply(&mut self.sim, cuts);
    }

    /// Cut off first (what is in flight is lost), then stopped. With
    /// `kill`, every connection a peer has to it is reset at once (a
    /// client's pending request fails then, not at its timeout; turmoil's
    /// `reset_peers`, in a fixed order: the host's own closing segments,
    /// sent in the order its runtime drops its tasks, are dropped), then
    /// its links are healed: a connect finds no listener and is refused at
    /// once. The disk keeps what the OS had, synced or not.
    async fn crash(&mut self, at: Duration, host: &str, kill: bool, cuts: &mut Cuts, cause: Cause) {
        assert!(
            self.disks.contains_key(host),
            "sim: a crash of {host}, which is not a node"
        );
        cuts.cut_off(host, cause);
        self.links.apply(&mut self.sim, cuts);
        self.sim.crash(host);
        if kill {
            self.sim.reset_peers(host);
            cuts.clear(cause.0);
            self.links.apply(&mut self.sim, cuts);
        }
        // A pause in progress dies with the process.
        self.ctx.clock(host).end_pauses(at);
        if let Some(d) = self.disks.get(host).filter(|_| !kill) {
            d.lock().unwrap_or_else(|e| e.into_inner()).crash();
        }
        self.ctx.node_down(host, true);
    }

    async fn restart(&mut self, host: &str) {
        assert!(
            self.disks.contains_key(host),
            "sim: a restart of {host}, which is not a node"
        );
        self.sim.bounce(host);
        self.ctx.node_down(host, false);
    }

    /// The host's clock and sockets wait it out (see [`super::pause`]);
    /// the network keeps delivering what it sent before.
    fn pause(&mut self, host: &str, from: Duration, until: Duration) -> PauseEnd {
        assert!(
            self.ctx.clocks.contains_key(host),
            "sim: a pause of {host}, which is not a host"
        );
        self.ctx.add_pause(host, from, until);
        PauseEnd::Itself
    }

    fn set_latency(&mut self, a: &str, b: &str, latency: Option<Duration>) {
        match latency {
            Some(value) => self.sim.set_link_latency(a, b, value),
            None => {
                self.sim.set_link_latency(a, b, self.latency.lo);
                self.sim.set_link_max_message_latency(a, b, self.latency.hi);
            }
        }
    }

    fn jump_clock(&mut self, host: &str, by_ms: f64) {
        self.ctx
            .clock(host)
            .model()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .jump(by_ms);
    }

    fn set_clock_rate(&mut self, host: &str, at: Duration, rate: f64) -> f64 {
        let clock = self.ctx.clock(host);
        let mut model = clock.model().lock().unwrap_or_else(|e| e.into_inner());
        let from = model.rate();
        // What the parser validated, and what the checker divides by.
        assert!(
            (MIN_CLOCK_RATE..=MAX_CLOCK_RATE).contains(&rate) && from > 0.0,
            "sim: {host}'s clock rate set from {from} to {rate}"
        );
        model.set_rate(at, rate);
        from
    }
}

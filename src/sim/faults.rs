//! Applying one fault to the world: crash (power loss: cut off, then
//! stopped), kill (the process dies, its machine stays up), restart, partition, isolate, heal, pause, clock jump, clock
//! rate, slow link. Each is recorded in the history as a `fault` event whose
//! detail names the host(s) and durations; a fault that can do nothing
//! (crashing a node that is down, restarting one that is up, pausing one
//! that is down) as a `fault_skipped` event with the reason.

use super::world::{Timer, World};
use crate::history::{FaultEvent, SkipReason, SkippedFault};
use crate::scenario::{DurRange, FaultAction, Restart, Target};
use std::time::Duration;

/// `d` in whole milliseconds, as the history records it.
pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl World<'_> {
    fn resolve(&self, t: &Target) -> String {
        match t {
            Target::Host(h) => h.clone(),
            Target::Master => self.ctx.master(),
        }
    }

    /// Applies `action`, due at global time `now`; false when it could do
    /// nothing and was skipped. The driver applies a fault at the first step
    /// of the whole millisecond it is due at, or, for one released by an
    /// event in the middle of a step, at the next; either way as of its due
    /// time (what the hosts sent meanwhile on the links it acts on was held
    /// for it, see `Context::hold_for`).
    pub fn apply(&mut self, now: Duration, action: FaultAction) -> bool {
        let id = self.id();
        match action {
            FaultAction::Crash {
                host,
                restart,
                kill,
            } => {
                let host = self.resolve(&host);
                return self.crash(now, id, host, restart, kill);
            }
            FaultAction::Restart { host } => {
                let host = self.resolve(&host);
                return self.restart(now, &host);
            }
            FaultAction::Partition {
                sides,
                oneway,
                for_,
            } => self.partition(now, id, sides, oneway, for_),
            FaultAction::Isolate { host, for_ } => {
                let host = self.resolve(&host);
                self.net.cut_off(&host, &self.hosts, (id, "isolate"));
                if let Some(f) = for_ {
                    self.after(now + f, Timer::Clear(id));
                }
                let for_ms = for_.map(ms);
                self.record_fault(now, FaultEvent::Isolate { host, for_ms });
            }
            FaultAction::Heal => {
                self.net.clear_kinds(&["partition", "isolate"]);
                self.record_fault(now, FaultEvent::Heal);
            }
            FaultAction::Pause { host, for_ } => {
                let host = self.resolve(&host);
                return self.pause(now, host, for_);
            }
            FaultAction::ClockJump { host, by_ms } => {
                let host = self.resolve(&host);
                self.ctx
                    .clock(&host)
                    .model()
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .jump(by_ms);
                self.record_fault(now, FaultEvent::ClockJump { host, by_ms });
            }
            FaultAction::ClockRate { host, rate } => {
                let host = self.resolve(&host);
                let clock = self.ctx.clock(&host);
                let mut model = clock.model().lock().unwrap_or_else(|e| e.into_inner());
                let from = model.rate();
                model.set_rate(now, rate);
                drop(model);
                // `from` lets the checker move the end of a hold in progress.
                self.record_fault(now, FaultEvent::ClockRate { host, rate, from });
            }
            FaultAction::Latency {
                between,
                latency,
                for_,
            } => self.slow_link(now, id, between, latency, for_),
        }
        true
    }

    /// Power loss of `host`: cut off first (what is in flight is lost),
    /// then stopped, its disk crashed, its restart scheduled by `restart`
    /// (default `cluster.restart`); false when it is already down.
    ///
    /// With `kill`, its process dies on a machine that stays up: every
    /// connection a peer has to it is reset at once (a client's pending
    /// request fails then, not at its timeout; turmoil's `reset_peers`, in
    /// a fixed order: the host's own closing segments, sent in the order
    /// its runtime drops its tasks, are dropped), then its links are
    /// healed: a connect finds no listener and is refused at once. The
    /// disk keeps what the OS had, synced or not.
    fn crash(
        &mut self,
        now: Duration,
        id: u64,
        host: String,
        restart: Option<Restart>,
        kill: bool,
    ) -> bool {
        if self.down.contains_key(&host) {
            let skipped = SkippedFault::Crash { host };
            self.record_skipped(now, skipped, SkipReason::AlreadyDown);
            return false;
        }
        self.net.cut_off(&host, &self.hosts, (id, "crash"));
        self.net.apply(&mut self.sim, &self.hosts);
        self.sim.crash(host.as_str());
        if kill {
            self.sim.reset_peers(host.as_str());
            self.net.clear(id);
            self.net.apply(&mut self.sim, &self.hosts);
        }
        // A pause in progress dies with the process.
        self.ctx.clock(&host).end_pauses(now);
        if let Some(d) = self.disks.get(&host).filter(|_| !kill) {
            d.lock().unwrap_or_else(|e| e.into_inner()).crash();
        }
        self.down.insert(host.clone(), id);
        self.ctx.node_down(&host, true);
        let policy = restart.unwrap_or(self.scenario.cluster.restart);
        let fault = FaultEvent::Crash {
            host: host.clone(),
            restart: policy,
            kill,
        };
        self.record_fault(now, fault);
        self.schedule_restart(now, &host, id, policy);
        true
    }

    /// Cuts every link between two of `sides` (only side 1 -> side 2 when
    /// `oneway`), healed after `for_` when given.
    fn partition(
        &mut self,
        now: Duration,
        id: u64,
        sides: Vec<Vec<String>>,
        oneway: bool,
        for_: Option<Duration>,
    ) {
        self.net.cut_sides(&sides, oneway, (id, "partition"));
        if let Some(f) = for_ {
            self.after(now + f, Timer::Clear(id));
        }
        let for_ms = for_.map(ms);
        let fault = FaultEvent::Partition {
            sides,
            oneway,
            for_ms,
        };
        self.record_fault(now, fault);
    }

    /// Pauses `host` from `due` for `for_` (a triggered pause already took
    /// effect inside its host, at `due`); false when the host is down.
    fn pause(&mut self, due: Duration, host: String, for_: Duration) -> bool {
        // A node that is down runs nothing to pause.
        if self.down.contains_key(&host) {
            let for_ms = ms(for_);
            let skipped = SkippedFault::Pause { host, for_ms };
            self.record_skipped(due, skipped, SkipReason::Down);
            return false;
        }
        // The host's clock and sockets wait it out (see `pause`); the
        // network keeps delivering what it sent before.
        self.ctx.add_pause(&host, due, due + for_);
        let for_ms = ms(for_);
        self.record_fault(due, FaultEvent::Pause { host, for_ms });
        true
    }

    /// Sets the latency of the link `a` -> `b` to a value drawn from
    /// `latency`, restored after `for_` when given.
    fn slow_link(
        &mut self,
        now: Duration,
        id: u64,
        (a, b): (String, String),
        latency: DurRange,
        for_: Option<Duration>,
    ) {
        let value = latency.draw(&mut self.rng);
        self.slowed.insert((a.clone(), b.clone()), id);
        self.sim.set_link_latency(a.as_str(), b.as_str(), value);
        if let Some(f) = for_ {
            self.after(now + f, Timer::RestoreLatency(a.clone(), b.clone(), id));
        }
        let fault = FaultEvent::Latency {
            between: (a, b),
            latency_ms: ms(value),
            for_ms: for_.map(ms),
        };
        self.record_fault(now, fault);
    }
}

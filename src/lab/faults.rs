//! The lab's faults on the wall clock: the file's `[[faults]]` and the
//! nemesis's plan (drawn from the seed as the simulation draws it), applied
//! when their time comes, counted from the start of the run or, for
//! `after = "cN:acquired"`, from the first time the lab saw cN own the lock.
//!
//! Each means what it means in the simulation:
//! - a node's `crash`: its process ends (every connection through its links
//!   is reset, what was on its way lost; a connect is refused), its disk
//!   keeps what its persistence synced, and it restarts by the policy;
//!   `restart` brings it back on new ports, its links following;
//! - `partition`, `isolate`, `heal`, `latency`: on the links ([`super::net`]);
//! - `pause`: a node or the store reads, writes and expires nothing while
//!   its clock runs on; a client's process group gets SIGSTOP, then SIGCONT;
//! - `clock-jump`, `clock-rate` on a node: the clock it expires keys by; on
//!   a client, `clock-rate` only: its clock through libfaketime
//!   ([`super::faketime`]).
//!
//! Every fault is recorded (host `lab`) when applied, or as skipped when it
//! could do nothing, as the simulation records it.

use super::hosts::Hosts;
use super::plan::Timer;
use crate::history::{EventKind, FaultEvent, SkipReason, SkippedFault};
use crate::scenario::{FaultAction, Restart, Target, Trigger};
use crate::sim::due::{Due, Origin};
use crate::sim::faults::ms;
use std::time::Duration;

impl Hosts {
    /// Releases the triggered faults, applies those due by `now` and fires
    /// the timers due.
    pub async fn step_faults(&mut self, now: Duration) {
        let placed = self.rec.take_placed();
        self.faults.add_placed(placed);
        let waiting = std::mem::take(&mut self.faults.waiting);
        for w in waiting {
            let seen = match &w.trigger {
                Trigger::Acquired(c) => self.rec.first_owned(c),
                _ => None,
            };
            match seen {
                Some(t) => self.faults.queue.push(Due {
                    time: t + w.at,
                    action: w.action,
                    origin: Origin::File(w.index),
                    placed: None,
                }),
                None => self.faults.waiting.push(w),
            }
        }
        self.faults.queue.sort_by_key(|d| d.time);
        while self.faults.queue.first().is_some_and(|d| d.time <= now) {
            let due = self.faults.queue.remove(0);
            self.apply(due.action).await;
        }
        while let Some(entry) = self.faults.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let timer = entry.remove();
            self.fire(timer).await;
        }
        self.net.apply();
    }

    fn resolve(&self, t: &Target) -> String {
        match t {
            Target::Host(h) => h.clone(),
            Target::Master => self
                .master
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    fn fault(&self, f: FaultEvent) {
        self.rec.record("lab", EventKind::Fault(f));
    }

    fn skipped(&self, fault: SkippedFault, reason: SkipReason) {
        self.rec
            .record("lab", EventKind::FaultSkipped { fault, reason });
    }

    async fn apply(&mut self, action: FaultAction) {
        let now = self.rec.now();
        let id = self.faults.id();
        match action {
            FaultAction::Crash {
                host,
                restart,
                kill,
            } => {
                let host = self.resolve(&host);
                self.crash(now, id, host, restart, kill).await;
            }
            FaultAction::Restart { host } => {
                let host = self.resolve(&host);
                self.restart(&host).await;
            }
            FaultAction::Partition {
                sides,
                oneway,
                for_,
            } => self.partition(now, id, sides, oneway, for_),
            FaultAction::Isolate { host, for_ } => {
                let host = self.resolve(&host);
                let hosts = self.s.host_names();
                self.net.cuts.cut_off(&host, &hosts, (id, "isolate"));
                if let Some(f) = for_ {
                    self.faults.after(now + f, Timer::Clear(id));
                }
                let for_ms = for_.map(ms);
                self.fault(FaultEvent::Isolate { host, for_ms });
            }
            FaultAction::Heal => {
                self.net.cuts.clear_kinds(&["partition", "isolate"]);
                self.fault(FaultEvent::Heal);
            }
            FaultAction::Pause { host, for_ } => {
                let host = self.resolve(&host);
                self.pause(now, host, for_);
            }
            FaultAction::ClockJump { host, by_ms } => {
                let host = self.resolve(&host);
                if let Some(n) = self.nodes.get(&host) {
                    n.clock.jump(by_ms);
                }
                self.fault(FaultEvent::ClockJump { host, by_ms });
            }
            FaultAction::ClockRate { host, rate } => {
                let host = self.resolve(&host);
                let mut from = 1.0;
                if let Some(n) = self.nodes.get(&host) {
                    from = n.clock.rate();
                    n.clock.set_rate(rate);
                }
                if let Some(c) = self.clocks.get_mut(&host) {
                    from = c.rate();
                    c.set_rate(rate)
                        .expect("lab: rewriting a client's clock file");
                }
                self.fault(FaultEvent::ClockRate { host, rate, from });
            }
            FaultAction::Latency {
                between,
                latency,
                for_,
            } => {
                let value = latency.draw(&mut self.faults.rng);
                self.net.slow(&between.0, &between.1, id, value);
                if let Some(f) = for_ {
                    let timer = Timer::Restore(between.0.clone(), between.1.clone(), id);
                    self.faults.after(now + f, timer);
                }
                let fault = FaultEvent::Latency {
                    between,
                    latency_ms: ms(value),
                    for_ms: for_.map(ms),
                };
                self.fault(fault);
            }
        }
    }

    /// Power loss of a node (a client: SIGKILL of its group). A real
    /// node's sockets close with it and its links are reset, so a `kill`
    /// is done the same way; only the history tells them apart.
    async fn crash(
        &mut self,
        now: Duration,
        id: u64,
        host: String,
        restart: Option<Restart>,
        kill: bool,
    ) {
        if let Some(p) = self.clients.get(&host) {
            p.kill();
            let policy = restart.unwrap_or(Restart::Never);
            self.fault(FaultEvent::Crash {
                host,
                restart: policy,
                kill,
            });
            return;
        }
        let Some(node) = self.nodes.get_mut(&host) else {
            return;
        };
        if !node.crash().await {
            self.skipped(SkippedFault::Crash { host }, SkipReason::AlreadyDown);
            return;
        }
        for (_, link) in self.net.into_host(&host) {
            link.reset();
        }
        self.rec.node_down(&host);
        self.faults.paused.remove(&host);
        self.faults.down.insert(host.clone(), id);
        let policy = restart.unwrap_or(self.s.cluster.restart);
        self.fault(FaultEvent::Crash {
            host: host.clone(),
            restart: policy,
            kill,
        });
        if let Some(d) = policy.delay() {
            self.faults.after(now + d, Timer::Restart(host, id));
        }
    }

    /// Brings a crashed node back, its links following its new ports.
    async fn restart(&mut self, host: &str) {
        let Some(node) = self.nodes.get_mut(host) else {
            return;
        };
        let restarted = match node.restart().await {
            Ok(r) => r,
            Err(e) => panic!("lab: restarting {host}: {e}"),
        };
        if !restarted {
            let host = host.to_string();
            self.skipped(SkippedFault::Restart { host }, SkipReason::AlreadyUp);
            return;
        }
        self.faults.down.remove(host);
        for (from, link) in self.net.into_host(host) {
            if let Some(a) = node.addr(from) {
                link.set_server(a);
            }
        }
        let keys = self.rec.lock_keys();
        let node_ref = node.node().expect("a node that restarted is up");
        let held = crate::history::keys::lock_keys(node_ref, &keys);
        let count = node_ref.keyspace().counts().0;
        self.fault(FaultEvent::Restart {
            host: host.to_string(),
        });
        self.rec.node_up(host, count, held);
    }

    fn partition(
        &mut self,
        now: Duration,
        id: u64,
        sides: Vec<Vec<String>>,
        oneway: bool,
        for_: Option<Duration>,
    ) {
        self.net.cuts.cut_sides(&sides, oneway, (id, "partition"));
        if let Some(f) = for_ {
            self.faults.after(now + f, Timer::Clear(id));
        }
        let for_ms = for_.map(ms);
        self.fault(FaultEvent::Partition {
            sides,
            oneway,
            for_ms,
        });
    }

    fn pause(&mut self, now: Duration, host: String, for_: Duration) {
        if self.faults.down.contains_key(&host) {
            let skipped = SkippedFault::Pause {
                host,
                for_ms: ms(for_),
            };
            self.skipped(skipped, SkipReason::Down);
            return;
        }
        self.set_paused(&host, true);
        let until = self.faults.paused.entry(host.clone()).or_default();
        *until = (*until).max(now + for_);
        self.faults.after(now + for_, Timer::Resume(host.clone()));
        let for_ms = ms(for_);
        self.fault(FaultEvent::Pause { host, for_ms });
    }

    fn set_paused(&self, host: &str, paused: bool) {
        if let Some(n) = self.nodes.get(host) {
            n.set_paused(paused);
        } else if let Some(p) = self.clients.get(host) {
            if paused {
                p.pause();
            } else {
                p.resume();
            }
        } else if host == "store" {
            self.store.set_paused(paused);
        }
    }

    async fn fire(&mut self, timer: Timer) {
        match timer {
            Timer::Restart(host, crash) => match self.faults.down.get(&host) {
                Some(c) if *c == crash => self.restart(&host).await,
                Some(_) => {
                    let skipped = SkippedFault::Restart { host };
                    self.skipped(skipped, SkipReason::CrashedAgain);
                }
                None => self.skipped(SkippedFault::Restart { host }, SkipReason::AlreadyUp),
            },
            Timer::Clear(id) => self.net.cuts.clear(id),
            Timer::Restore(a, b, id) => self.net.restore(&a, &b, id),
            Timer::Resume(host) => {
                let now = self.rec.now();
                if self.faults.paused.get(&host).is_some_and(|u| *u <= now) {
                    self.faults.paused.remove(&host);
                    self.set_paused(&host, false);
                }
            }
        }
    }
}

//! The fault engine, one for both worlds: the faults of a run ([`plan`],
//! drawn from the seed by [`nemesis`] and [`aim`]), those due and waiting
//! ([`due`]), the timers that end them, the bookkeeping of what is down,
//! paused, cut ([`cuts`]) and slowed, and the history's record of each
//! fault applied or skipped. [`Engine`] decides; a world ([`World`]: the
//! simulation's turmoil hosts, or the lab's real processes and links) does
//! what a fault does to its hosts. [`setup`] holds what both worlds build
//! the same way from the scenario and the seed.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub mod aim;
pub mod cuts;
pub mod due;
pub mod fencing;
pub(crate) mod nemesis;
pub mod plan;
pub mod setup;
#[cfg(test)]
mod tests;

use cuts::{Cause, Cuts};
use due::{Applied, Due, Waiting};
use rand_chacha::ChaCha8Rng;
use redlock_history::{EventKind, FaultEvent, SkipReason, SkippedFault};
use redlock_scenario::{DurRange, FaultAction, Restart, Scenario, Target, Trigger};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

/// `d` in whole milliseconds, as the history records durations.
pub(crate) fn whole_millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// How a pause ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseEnd {
    /// By itself (the simulation's clocks and sockets wait it out).
    Itself,
    /// When the engine resumes the host ([`World::resume`]).
    OnResume,
}

/// What a fault does to the hosts of one world. The engine has already
/// decided that the fault acts (a crash of a node that is up, a restart of
/// one that is down, ...) and records it once the world has done it.
pub trait World {
    /// The instant a fault or timer due at `due` takes effect: the
    /// simulation applies it as of its due time; the lab when it gets to it.
    fn instant(&self, due: Duration) -> Duration;
    /// The instant a timer set for `at` is due (the simulation's fall on
    /// whole milliseconds, see [`due::on_ms`]).
    fn timer_due(&self, at: Duration) -> Duration {
        at
    }
    /// The node the sentinel names master now (`Target::Master`).
    fn master(&self) -> String;
    /// Records `kind` in the history at `at`.
    fn record(&self, at: Duration, kind: EventKind);
    /// Brings the world's links to what `cuts` want.
    fn sync_links(&mut self, cuts: &Cuts);
    /// A node's power loss (with `kill`: its process dies, the machine
    /// stays up); `cause` is the crash's, for the links it cuts.
    fn crash(
        &mut self,
        at: Duration,
        host: &str,
        kill: bool,
        cuts: &mut Cuts,
        cause: Cause,
    ) -> impl Future<Output = ()>;
    /// Starts a crashed node again (its crash's cuts already healed).
    fn restart(&mut self, host: &str) -> impl Future<Output = ()>;
    /// After the restart is recorded: what the node came back with.
    fn restarted(&mut self, _host: &str) {}
    /// Pauses `host` from `from` to `until`.
    fn pause(&mut self, host: &str, from: Duration, until: Duration) -> PauseEnd;
    /// Ends a pause ([`PauseEnd::OnResume`]).
    fn resume(&mut self, _host: &str) {}
    /// Sets the latency of the pair `a`, `b`; `None`: the network's own.
    fn set_latency(&mut self, a: &str, b: &str, latency: Option<Duration>);
    /// Moves `host`'s clock by `by_ms`.
    fn jump_clock(&mut self, host: &str, by_ms: f64);
    /// Sets `host`'s clock rate from `at`; returns the rate it had.
    fn set_clock_rate(&mut self, host: &str, at: Duration, rate: f64) -> f64;
}

/// Something the engine does later.
#[derive(Clone, Debug)]
enum Timer {
    /// Restart a crashed node, if it is still down from that crash (id).
    Restart(String, u64),
    /// Remove the network cuts of fault `id`.
    Clear(u64),
    /// Give a slowed pair back the network's latency, unless a later
    /// latency fault (another id) took it over.
    RestoreLatency(String, String, u64),
    /// End a pause, unless a longer one runs on.
    Resume(String),
}

/// The faults of one run, those to come and those in progress.
pub struct Engine {
    /// Faults not yet applied, sorted by time (ties keep file order).
    queue: Vec<Due>,
    /// Waiting for their trigger (the lab's; the simulation's context
    /// releases its own at the trigger's instant).
    waiting: Vec<Waiting>,
    timers: BTreeMap<(Duration, u64), Timer>,
    /// The cluster's nodes (`n1`..`nN`): what a crash or a restart acts on.
    nodes: BTreeSet<String>,
    /// Nodes down, with the id of their crash.
    down: BTreeMap<String, u64>,
    /// Hosts paused until the engine resumes them ([`PauseEnd::OnResume`]),
    /// until when.
    paused: BTreeMap<String, Duration>,
    /// The latest latency fault on each slowed pair, by id.
    slowed: BTreeMap<(String, String), u64>,
    cuts: Cuts,
    /// Ids for faults and timers, in the order they are made.
    next_id: u64,
    rng: ChaCha8Rng,
    default_restart: Restart,
    /// The faults applied so far (skipped ones left out), in order.
    applied: Vec<Applied>,
    /// The file's faults that came due and could do nothing, with why.
    skipped: Vec<(usize, SkipReason)>,
    /// Why the fault being applied was skipped, if it was.
    last_skip: Option<SkipReason>,
}

/// What became of a run's faults: those applied, in order, and the file's
/// that came due and could do nothing (by index in `[[faults]]`). A file's
/// fault in neither never came due (its trigger never came, or it was due
/// after the run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFaults {
    pub applied: Vec<Applied>,
    pub skipped: Vec<(usize, SkipReason)>,
}

impl Engine {
    /// The engine of `s`'s run with `seed`, the faults in `queue` due.
    pub fn new(s: &Scenario, seed: u64, queue: Vec<Due>) -> Engine {
        Engine {
            queue,
            waiting: Vec::new(),
            timers: BTreeMap::new(),
            nodes: (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect(),
            down: BTreeMap::new(),
            paused: BTreeMap::new(),
            slowed: BTreeMap::new(),
            cuts: Cuts::new(s.host_names()),
            next_id: 0,
            rng: setup::rng_for(seed, "world", "faults"),
            default_restart: s.cluster.restart,
            applied: Vec::new(),
            skipped: Vec::new(),
            last_skip: None,
        }
    }

    /// The wanted state of the links.
    pub fn cuts(&self) -> &Cuts {
        &self.cuts
    }

    /// The faults applied so far, in order, and the file's skipped.
    pub fn faults(&self) -> RunFaults {
        RunFaults {
            applied: self.applied.clone(),
            skipped: self.skipped.clone(),
        }
    }

    /// [`Engine::faults`], taken.
    pub fn into_faults(self) -> RunFaults {
        RunFaults {
            applied: self.applied,
            skipped: self.skipped,
        }
    }

    /// Adds faults due (triggered, or placed by the aimed nemesis).
    pub fn add_due(&mut self, due: Vec<Due>) {
        if !due.is_empty() {
            self.queue.extend(due);
            self.queue.sort_by_key(|d| d.time);
        }
    }

    /// Keeps faults waiting for their trigger, for [`Engine::release`].
    pub fn wait_for(&mut self, waiting: Vec<Waiting>) {
        self.waiting.extend(waiting);
    }

    /// Makes due the waiting faults whose trigger came: `seen` says when.
    pub fn release(&mut self, seen: impl Fn(&Trigger) -> Option<Duration>) {
        let mut due = Vec::new();
        for w in std::mem::take(&mut self.waiting) {
            match seen(&w.trigger) {
                Some(t) => due.push(Due {
                    time: t + w.at,
                    action: w.action,
                    origin: due::Origin::File(w.index),
                    placed: None,
                }),
                None => self.waiting.push(w),
            }
        }
        self.add_due(due);
    }

    /// Whether a fault or a timer is due by `now`.
    pub fn is_due(&self, now: Duration) -> bool {
        self.queue.first().is_some_and(|d| d.time <= now)
            || self
                .timers
                .first_key_value()
                .is_some_and(|((at, _), _)| *at <= now)
    }

    /// The first time a fault or a timer is due.
    pub fn next_due(&self) -> Option<Duration> {
        let fault = self.queue.first().map(|d| d.time);
        let timer = self.timers.first_key_value().map(|((t, _), _)| *t);
        fault.into_iter().chain(timer).min()
    }

    /// Applies the faults due by `now`, then fires the timers due; the
    /// world's links follow. Says whether anything was done.
    pub async fn apply_due<W: World>(&mut self, world: &mut W, now: Duration) -> bool {
        let mut changed = false;
        while self.queue.first().is_some_and(|d| d.time <= now) {
            let due = self.queue.remove(0);
            let at = world.instant(due.time);
            self.last_skip = None;
            if let due::Origin::File(i) = due.origin {
                // A file's fault is planned once (due, or waiting for its
                // trigger, which releases it once): it comes due once.
                assert!(
                    !self.applied.iter().any(|a| a.origin == due.origin)
                        && !self.skipped.iter().any(|(k, _)| *k == i),
                    "engine: the file's fault {i} came due a second time"
                );
            }
            if self.apply(world, at, due.action.clone()).await {
                assert!(
                    self.last_skip.is_none(),
                    "engine: a fault both applied and skipped ({:?})",
                    self.last_skip
                );
                self.applied.push(Applied {
                    time: due.time,
                    action: due.action,
                    origin: due.origin,
                    placed: due.placed,
                });
            } else if let due::Origin::File(i) = due.origin {
                let why = self
                    .last_skip
                    .expect("a fault that did nothing was recorded as skipped");
                self.skipped.push((i, why));
            }
            changed = true;
        }
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let at = world.instant(entry.key().0);
            let timer_id = entry.key().1;
            let timer = entry.remove();
            self.fire(world, at, timer_id, timer).await;
            changed = true;
        }
        if changed {
            self.check_state();
            world.sync_links(&self.cuts);
        }
        changed
    }

    /// What the engine's bookkeeping guarantees between two faults: only
    /// nodes are down, each from a crash the engine made; a pause the
    /// engine ends is of a host that is up (a crash ends its pause, a
    /// pause of a node that is down is skipped).
    fn check_state(&self) {
        for (host, crash) in &self.down {
            assert!(
                self.nodes.contains(host) && *crash <= self.next_id,
                "engine: {host} down from crash {crash}, not a node's crash the engine made (ids to {})",
                self.next_id
            );
        }
        for host in self.paused.keys() {
            assert!(
                !self.down.contains_key(host),
                "engine: {host} both down and paused until the engine resumes it"
            );
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn after<W: World>(&mut self, world: &W, at: Duration, timer: Timer) {
        let id = self.id();
        let due = world.timer_due(at);
        assert!(
            due >= at,
            "engine: a timer set for {at:?} due earlier, at {due:?} ({timer:?})"
        );
        self.timers.insert((due, id), timer);
    }

    fn resolve<W: World>(world: &W, t: &Target) -> String {
        match t {
            Target::Host(h) => h.clone(),
            Target::Master => world.master(),
        }
    }

    fn skipped<W: World>(
        &mut self,
        world: &W,
        at: Duration,
        fault: SkippedFault,
        reason: SkipReason,
    ) {
        self.last_skip = Some(reason);
        world.record(at, EventKind::FaultSkipped { fault, reason });
    }

    /// Applies `action` at `at`; false when it could do nothing and was
    /// recorded as skipped.
    async fn apply<W: World>(&mut self, world: &mut W, at: Duration, action: FaultAction) -> bool {
        let id = self.id();
        let fault = match action {
            FaultAction::Crash {
                host,
                restart,
                kill,
            } => {
                let host = Self::resolve(world, &host);
                return self.crash(world, at, id, host, restart, kill).await;
            }
            FaultAction::Restart { host } => {
                let host = Self::resolve(world, &host);
                return self.restart(world, at, &host).await;
            }
            FaultAction::Partition {
                sides,
                oneway,
                for_,
            } => {
                self.cuts.cut_sides(&sides, oneway, (id, "partition"));
                self.heal_after(world, at, id, for_);
                let for_ms = for_.map(whole_millis);
                FaultEvent::Partition {
                    sides,
                    oneway,
                    for_ms,
                }
            }
            FaultAction::Isolate { host, for_ } => {
                let host = Self::resolve(world, &host);
                self.cuts.cut_off(&host, (id, "isolate"));
                self.heal_after(world, at, id, for_);
                let for_ms = for_.map(whole_millis);
                FaultEvent::Isolate { host, for_ms }
            }
            FaultAction::Heal => {
                self.cuts.clear_kinds(&["partition", "isolate"]);
                FaultEvent::Heal
            }
            FaultAction::Pause { host, for_ } => {
                let host = Self::resolve(world, &host);
                return self.pause(world, at, host, for_);
            }
            FaultAction::ClockJump { host, by_ms } => {
                let host = Self::resolve(world, &host);
                world.jump_clock(&host, by_ms);
                FaultEvent::ClockJump { host, by_ms }
            }
            FaultAction::ClockRate { host, rate } => {
                let host = Self::resolve(world, &host);
                // `from` lets the checker move the end of a hold in progress.
                let from = world.set_clock_rate(&host, at, rate);
                FaultEvent::ClockRate { host, rate, from }
            }
            FaultAction::Latency {
                between,
                latency,
                for_,
            } => self.slow(world, at, id, between, latency, for_),
        };
        world.record(at, EventKind::Fault(fault));
        true
    }

    fn heal_after<W: World>(&mut self, world: &W, at: Duration, id: u64, for_: Option<Duration>) {
        if let Some(f) = for_ {
            self.after(world, at + f, Timer::Clear(id));
        }
    }

    /// A node's power loss (or, with `kill`, its process's death), its
    /// restart scheduled by `restart` (default `cluster.restart`); false
    /// when it is already down.
    async fn crash<W: World>(
        &mut self,
        world: &mut W,
        at: Duration,
        id: u64,
        host: String,
        restart: Option<Restart>,
        kill: bool,
    ) -> bool {
        assert!(
            self.nodes.contains(&host),
            "engine: a crash of {host}, which is not a node"
        );
        if self.down.contains_key(&host) {
            let skipped = SkippedFault::Crash { host };
            self.skipped(world, at, skipped, SkipReason::AlreadyDown);
            return false;
        }
        world
            .crash(at, &host, kill, &mut self.cuts, (id, "crash"))
            .await;
        // A pause in progress dies with the process.
        self.paused.remove(&host);
        self.down.insert(host.clone(), id);
        let policy = restart.unwrap_or(self.default_restart);
        let fault = FaultEvent::Crash {
            host: host.clone(),
            restart: policy,
            kill,
        };
        world.record(at, EventKind::Fault(fault));
        if let Some(d) = policy.delay() {
            self.after(world, at + d, Timer::Restart(host, id));
        }
        true
    }

    /// Brings a crashed node back, its crash's cuts healed; false when it
    /// is up (the skip recorded).
    async fn restart<W: World>(&mut self, world: &mut W, at: Duration, host: &str) -> bool {
        assert!(
            self.nodes.contains(host),
            "engine: a restart of {host}, which is not a node"
        );
        let Some(crash_id) = self.down.remove(host) else {
            let host = host.to_string();
            self.skipped(
                world,
                at,
                SkippedFault::Restart { host },
                SkipReason::AlreadyUp,
            );
            return false;
        };
        // Its crash ended any pause, and a pause of a node that is down is
        // skipped: the world never restarts a node it still has paused.
        assert!(
            !self.paused.contains_key(host),
            "engine: {host} restarted with a pause in progress"
        );
        self.cuts.clear(crash_id);
        world.sync_links(&self.cuts);
        world.restart(host).await;
        let host = host.to_string();
        world.record(
            at,
            EventKind::Fault(FaultEvent::Restart { host: host.clone() }),
        );
        world.restarted(&host);
        true
    }

    /// Pauses `host` for `for_` from `at`; false when it is down (a node
    /// that is down runs nothing to pause).
    fn pause<W: World>(
        &mut self,
        world: &mut W,
        at: Duration,
        host: String,
        for_: Duration,
    ) -> bool {
        let for_ms = whole_millis(for_);
        assert!(
            self.cuts.hosts().contains(&host),
            "engine: a pause of {host}, which is not a host of the world"
        );
        if self.down.contains_key(&host) {
            let skipped = SkippedFault::Pause { host, for_ms };
            self.skipped(world, at, skipped, SkipReason::Down);
            return false;
        }
        if world.pause(&host, at, at + for_) == PauseEnd::OnResume {
            let until = self.paused.entry(host.clone()).or_default();
            *until = (*until).max(at + for_);
            self.after(world, at + for_, Timer::Resume(host.clone()));
        }
        world.record(at, EventKind::Fault(FaultEvent::Pause { host, for_ms }));
        true
    }

    /// Sets the latency of the pair `a`, `b` to a value drawn from
    /// `latency`, restored after `for_` when given.
    fn slow<W: World>(
        &mut self,
        world: &mut W,
        at: Duration,
        id: u64,
        (a, b): (String, String),
        latency: DurRange,
        for_: Option<Duration>,
    ) -> FaultEvent {
        let value = latency.draw(&mut self.rng);
        self.slowed.insert(pair(&a, &b), id);
        world.set_latency(&a, &b, Some(value));
        if let Some(f) = for_ {
            self.after(
                world,
                at + f,
                Timer::RestoreLatency(a.clone(), b.clone(), id),
            );
        }
        FaultEvent::Latency {
            between: (a, b),
            latency_ms: whole_millis(value),
            for_ms: for_.map(whole_millis),
        }
    }

    async fn fire<W: World>(&mut self, world: &mut W, at: Duration, timer_id: u64, timer: Timer) {
        // A restore is made by its fault, after it: the fault's id (one
        // counter for faults and timers) comes first.
        if let Timer::Restart(_, fault) | Timer::Clear(fault) | Timer::RestoreLatency(_, _, fault) =
            &timer
        {
            assert!(
                *fault < timer_id,
                "engine: timer {timer_id} ({timer:?}) restores fault {fault}, made after it"
            );
        }
        match timer {
            Timer::Restart(host, crash) => match self.down.get(&host) {
                Some(c) if *c == crash => {
                    self.restart(world, at, &host).await;
                }
                // A later crash's own policy decides when it comes back.
                Some(_) => {
                    let skipped = SkippedFault::Restart { host };
                    self.skipped(world, at, skipped, SkipReason::CrashedAgain);
                }
                None => {
                    let skipped = SkippedFault::Restart { host };
                    self.skipped(world, at, skipped, SkipReason::AlreadyUp);
                }
            },
            Timer::Clear(id) => self.cuts.clear(id),
            Timer::RestoreLatency(a, b, id) => {
                if self.slowed.get(&pair(&a, &b)) == Some(&id) {
                    self.slowed.remove(&pair(&a, &b));
                    world.set_latency(&a, &b, None);
                }
            }
            Timer::Resume(host) => {
                if self.paused.get(&host).is_some_and(|u| *u <= at) {
                    self.paused.remove(&host);
                    world.resume(&host);
                }
            }
        }
    }
}

/// The pair `a`, `b` in either order (a latency acts both ways).
fn pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// The value of a future that is ready at once: a world whose hosts act
/// immediately (the simulation's) awaits nothing.
pub fn ready<T>(fut: impl Future<Output = T>) -> T {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("engine: a world that acts at once had to wait"),
    }
}

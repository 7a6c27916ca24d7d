//! The stepper: one turmoil `Sim` per run, stepped by the stepper with faults
//! applied between ticks: at the first step of each whole millisecond, as
//! of the time each was due (a fault released by an event falls due at the
//! event's instant, in the middle of a step; see `Context::record_at`).
//!
//! Ticks in which nothing can happen are taken at once, and a host with
//! nothing due in a step is left behind (turmoil's `step_lazily`): what
//! may happen is known from the hosts' timers ([`Wakeups`], kept by their
//! clocks), the network's next delivery and the stepper's own queue. The
//! run is the one stepping every host every tick makes
//! ([`Stepping::EveryTick`]); a host that acts inside a span taken as quiet
//! is a panic, never a different run.
//!
//! [`Stepper`] owns the hosts ([`SimWorld`]: the `Sim`, its links, the
//! disks) and the fault engine ([`Engine`]: the faults due, the timers that
//! end them, what is down, cut and slowed). Hosts talk to it only through
//! the shared [`Context`]. The loop stops when every client has finished (no new lock
//! attempt starts after `duration`; a held lock is still released) or at a
//! hard limit past the end.

use super::context::Context;
use super::world::SimWorld;
use redlock_engine::due::Due;
use redlock_engine::{ready, Engine};
use redlock_history::EventKind;
use redlock_proto::clock::Wakeups;
use redlock_scenario::Scenario;
use std::sync::Arc;
use std::time::Duration;

/// The loop of one simulated run.
pub(crate) struct Stepper<'a> {
    pub(crate) world: SimWorld<'a>,
    pub(crate) engine: Engine,
    pub scenario: Scenario,
    /// The loop stops here even if a client has not finished.
    pub(crate) limit: Duration,
    /// The deadlines of the hosts' timers (see [`Wakeups`]).
    pub(crate) wakeups: Wakeups,
    /// Whether steps in which nothing can happen are skipped.
    pub stepping: Stepping,
}

/// How the stepper moves time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Stepping {
    /// Steps in which nothing can happen are taken at once: the run is
    /// the one [`Stepping::EveryTick`] makes, faster.
    #[default]
    Skip,
    /// Every tick is a step of its own (to check `Skip` against).
    EveryTick,
}

/// Why a run could not complete.
#[derive(Debug)]
pub struct RunError(pub String);

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulation failed: {}", self.0)
    }
}

impl std::error::Error for RunError {}

impl Stepper<'_> {
    fn ctx(&self) -> &Arc<Context> {
        &self.world.ctx
    }

    /// Runs the simulation to the end.
    pub(crate) fn run(&mut self) -> Result<(), RunError> {
        let end = self.ctx().end;
        let mut ended = false;
        // Events reach the checkers this far behind the present: a fault
        // is recorded at the time it was due, at most a tick ago.
        let lag = (self.scenario.tick * 4).max(Duration::from_millis(10));
        let mut acted: Option<u128> = None;
        loop {
            let now = self.world.sim.elapsed();
            self.ctx().recorder.flush(now.saturating_sub(lag));
            // The stepper acts at the first step at or after each whole
            // millisecond, where every timer falls (see `due::on_ms`): at
            // a tick that divides a millisecond, at exactly the same times.
            let ms = now.as_millis();
            let mut changed = false;
            if acted != Some(ms) {
                changed = self.apply_due(now);
                acted = Some(ms);
            }
            if !ended && now >= end {
                self.ctx().record_at(now, "driver", EventKind::End);
                ended = true;
            }
            // The first step runs every host's software for the first
            // time: its tasks are ready, and they arm their first timers.
            let skip = self.stepping == Stepping::Skip && now > Duration::ZERO && !changed;
            let done = self.step(now, skip, ended)?;
            if done || now > self.limit {
                return Ok(());
            }
        }
    }

    /// One step from `now`: with `skip`, as many ticks as are quiet, the
    /// hosts with nothing due before its end left behind; else one tick,
    /// every host run. Says whether every client has finished.
    fn step(&mut self, now: Duration, skip: bool, ended: bool) -> Result<bool, RunError> {
        let skip = skip && self.whole_ms() && self.world.sim.may_skip();
        let armed = if skip {
            self.wakeups.earliest_by_host()
        } else {
            Vec::new()
        };
        let ticks = if skip {
            let timer = armed.iter().map(|(_, t)| *t).min();
            self.quiet_ticks(now, ended, timer)
        } else {
            1
        };
        let activity = self.wakeups.activity();
        self.wakeups.set_present(now);
        let end_of_step = now + self.scenario.tick * ticks;
        // A host with nothing due before the step's end may stay behind.
        let idle = |host: &str| {
            skip && armed
                .iter()
                .find(|(h, _)| &**h == host)
                .is_none_or(|(_, t)| *t >= end_of_step)
        };
        let done = match self.world.sim.step_lazily(ticks, idle) {
            Ok(done) => done,
            // Something was due inside the span: a bug, never a verdict.
            Err(e) if ticks > 1 => panic!("sim: skipped {ticks} ticks from {now:?}: {e}"),
            Err(e) => return Err(RunError(e.to_string())),
        };
        // The hosts' timers and the stepper's faults are set against this.
        assert_eq!(
            self.world.sim.elapsed(),
            end_of_step,
            "sim: a step of {ticks} ticks from {now:?} ended elsewhere"
        );
        assert!(
            ticks == 1 || self.wakeups.activity() == activity,
            "sim: skipped {ticks} ticks from {now:?}, but a host ran inside them (a timer the wake-ups did not know)"
        );
        // A host left behind that acts in the past: also a bug.
        let late = self
            .world
            .sim
            .take_sent_in_past()
            .or_else(|| self.wakeups.take_late());
        assert!(
            late.is_none(),
            "sim: a host left behind had something due: {late:?}"
        );
        Ok(done)
    }

    /// How many ticks the next step may take at once: as many as end at or
    /// before the first instant at which something may happen (see
    /// [`Stepper::next_event`]); at least one.
    ///
    /// A step may end at that instant: a timer due then fires at the end
    /// of the step, and its task runs at the start of the next, as in a
    /// step of one tick (a host's step returns as soon as the step's own
    /// timer fires, before the tasks woken with it run); a message due
    /// then is made deliverable at the end of the step and delivered at
    /// the start of the next; a fault due then is applied before the next.
    /// Only a tick of whole milliseconds skips (see [`Stepper::whole_ms`]).
    fn quiet_ticks(&self, now: Duration, ended: bool, timer: Option<Duration>) -> u32 {
        let tick = self.scenario.tick;
        let next = self.next_event(now, ended, timer);
        let quiet = next.saturating_sub(now).as_nanos() / tick.as_nanos();
        let ticks = quiet.clamp(1, u32::MAX as u128) as u32;
        // A step of many ticks never passes what may happen next.
        assert!(
            ticks == 1 || now + tick * ticks <= next,
            "sim: {ticks} quiet ticks from {now:?} pass the next event at {next:?}"
        );
        ticks
    }

    /// Whether the tick is whole milliseconds. A shorter one runs the ready
    /// tasks of a step in more than one pass (see turmoil's `PATCH.md`), so
    /// a task may be ready after a step with no timer: it steps every tick.
    fn whole_ms(&self) -> bool {
        self.scenario.tick.as_nanos().is_multiple_of(1_000_000)
    }

    /// The first instant, from `now` on, at which something may happen:
    /// a host's timer falls due (`timer`, the earliest of the wake-ups: a
    /// task woken by one and not yet run keeps its deadline), the network
    /// delivers, a fault or a stepper's timer is due, the run ends or
    /// reaches its limit. Tasks woken otherwise run in a step of one tick:
    /// by the stepper (`apply_due` said so), or from another host outside
    /// the network (turmoil's `may_skip` says so); a delivery's receiver
    /// runs in the step that delivers it.
    fn next_event(&self, now: Duration, ended: bool, timer: Option<Duration>) -> Duration {
        let mut next = self.limit + Duration::from_nanos(1);
        let mut at = |t: Duration| next = next.min(t);
        if let Some(t) = timer {
            at(t);
        }
        if let Some(d) = self.world.sim.next_delivery() {
            at(now + d);
        }
        if let Some(t) = self.engine.next_due() {
            at(t);
        }
        if !ended {
            at(self.ctx().end);
        }
        next
    }

    /// Applies the faults and timers due at `now`; says whether anything
    /// changed (what changed may wake a host's tasks).
    fn apply_due(&mut self, now: Duration) -> bool {
        let triggered = self.ctx().take_due();
        self.engine
            .add_due(triggered.into_iter().map(Due::on_ms).collect());
        let held = self.ctx().take_held();
        if held.is_empty() && !self.engine.is_due(now) {
            return false;
        }
        // What the stepper does may wake a host's tasks at once (a crash
        // drops what was on its way to the host, and a connect waiting for
        // it fails): every host must be at the present first.
        if let Err(e) = self.world.sim.catch_up() {
            panic!("sim: bringing the hosts to {now:?}: {e}");
        }
        for (from, to) in &held {
            self.world.links.held_by_host(from, to);
        }
        let applied = ready(self.engine.apply_due(&mut self.world, now));
        if !held.is_empty() && !applied {
            self.world
                .links
                .apply(&mut self.world.sim, self.engine.cuts());
        }
        true
    }
}

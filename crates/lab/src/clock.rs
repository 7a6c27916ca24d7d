//! A lab node's clock: the machine's monotonic clock, run through the same
//! [`ClockModel`] as a simulated host's, so that the scenario's clock faults
//! (a rate, a jump) act on the clock the node expires keys by.
//!
//! Global time is the time since the lab run started (`Instant`); the wall
//! clock starts at the machine's wall time then (the lab is not
//! deterministic: the seed fixes its plan of faults, not its history).
//!
//! It also knows whether its host is paused, as [`redlock_proto::clock::SimClock`]
//! does: a timer that comes due during a pause fires when the pause ends,
//! as a stopped process handles its timers once it runs again (the node's
//! expiry, its fsync, its replication's timeouts); the clocks keep running.

use super::gate::running;
use redlock_proto::clock::{Clock, ClockModel, Sleep};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// One lab host's clock; clones share it, and the lab changes its model.
#[derive(Clone)]
pub(crate) struct LabClock {
    origin: Instant,
    model: Arc<Mutex<ClockModel>>,
    paused: Arc<watch::Sender<bool>>,
}

impl LabClock {
    /// A clock of rate `rate` whose wall time is `epoch_ms + offset_ms` at
    /// `origin` (the start of the run).
    pub(crate) fn new(origin: Instant, epoch_ms: i64, offset_ms: f64, rate: f64) -> LabClock {
        assert!(
            rate > 0.0 && offset_ms.is_finite(),
            "a lab clock of rate {rate} and offset {offset_ms} ms"
        );
        LabClock {
            origin,
            model: Arc::new(Mutex::new(ClockModel::new(epoch_ms, offset_ms, rate))),
            paused: Arc::new(watch::channel(false).0),
        }
    }

    /// Stops or resumes the host.
    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused.send_replace(paused);
    }

    /// Whether the host is paused, to wait on.
    pub(crate) fn paused(&self) -> watch::Receiver<bool> {
        self.paused.subscribe()
    }

    /// Time since the run started.
    pub(crate) fn global(&self) -> Duration {
        self.origin.elapsed()
    }

    /// Runs at `rate` from now on; both clocks stay continuous.
    pub(crate) fn set_rate(&self, rate: f64) {
        assert!(rate > 0.0, "a lab clock's rate set to {rate}");
        let g = self.global();
        self.with(|m| m.set_rate(g, rate));
    }

    /// Its rate now.
    pub(crate) fn rate(&self) -> f64 {
        self.with(|m| m.rate())
    }

    /// Steps the wall clock by `by_ms` (negative steps back).
    pub(crate) fn jump(&self, by_ms: f64) {
        assert!(by_ms.is_finite(), "a lab clock jumped by {by_ms} ms");
        self.with(|m| m.jump(by_ms));
    }

    fn with<T>(&self, f: impl FnOnce(&mut ClockModel) -> T) -> T {
        f(&mut self.model.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Clock for LabClock {
    fn now(&self) -> Duration {
        let g = self.global();
        self.with(|m| m.mono_at(g))
    }

    fn wall_ms(&self) -> i64 {
        let g = self.global();
        self.with(|m| m.wall_ms_at(g))
    }

    fn wall_us(&self) -> i64 {
        let g = self.global();
        self.with(|m| m.wall_us_at(g))
    }

    fn sleep(&self, d: Duration) -> Sleep {
        let clock = self.clone();
        Box::pin(async move {
            let target = clock.now() + d;
            // Re-check after each wake: the rate may change meanwhile.
            loop {
                let now = clock.now();
                if now >= target {
                    // Due during a pause: it fires when the pause ends.
                    running(&mut clock.paused()).await;
                    return;
                }
                let g = clock.with(|m| m.global_for(target - now));
                tokio::time::sleep(g.max(Duration::from_micros(100))).await;
            }
        })
    }
}

/// A node's clock as the lab reads it, to know when its keys run out:
/// the node code's [`LabClock`], a real server's clock through libfaketime,
/// or the machine's own.
#[derive(Clone)]
pub(crate) enum NodeTime {
    Model(LabClock),
    Fake(super::faketime::FakeView),
    System,
}

impl NodeTime {
    /// Its wall time now, in ms since the epoch.
    pub(crate) fn wall_ms(&self) -> f64 {
        match self {
            NodeTime::Model(c) => c.wall_ms() as f64,
            NodeTime::Fake(v) => v.wall_ms(),
            NodeTime::System => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64() * 1e3),
        }
    }

    /// Its rate now.
    pub(crate) fn rate(&self) -> f64 {
        match self {
            NodeTime::Model(c) => c.rate(),
            NodeTime::Fake(v) => v.rate(),
            NodeTime::System => 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_clock_runs_ahead_and_a_jump_moves_only_the_wall() {
        let origin = Instant::now() - Duration::from_secs(10);
        let c = LabClock::new(origin, 1_000_000, 0.0, 2.0);
        let mono = c.now();
        assert!(mono >= Duration::from_secs(20), "{mono:?}");
        assert!(mono < Duration::from_secs(21), "{mono:?}");
        let wall = c.wall_ms();
        c.jump(5_000.0);
        let after = c.wall_ms();
        assert!((5_000..6_000).contains(&(after - wall)), "{}", after - wall);
        assert!(c.now() - mono < Duration::from_secs(1));
        c.set_rate(1.0);
        let mono = c.now();
        assert!(mono >= Duration::from_secs(20) && mono < Duration::from_secs(21));
    }

    #[tokio::test]
    async fn a_timer_due_in_a_pause_fires_when_it_ends() {
        let c = LabClock::new(Instant::now(), 0, 0.0, 1.0);
        c.set_paused(true);
        let t = Instant::now();
        let sleep = tokio::spawn(c.sleep(Duration::from_millis(10)));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!sleep.is_finished(), "fired during the pause");
        c.set_paused(false);
        sleep.await.unwrap();
        assert!(t.elapsed() >= Duration::from_millis(200));
    }
}

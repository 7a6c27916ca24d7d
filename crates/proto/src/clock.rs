//! Monotonic and wall clocks, for real processes and for simulated hosts.
//!
//! Node and client code read time only through [`Clock`]: `now` is the
//! monotonic clock (elapsed time, lock validity, sleeps), `wall_ms` is the wall
//! clock (key expiry, as Redis uses it). [`SystemClock`] is the machine's.
//! [`SimClock`] is one simulated host's, as TigerBeetle's `testing/time.zig`
//! does it: a [`ClockModel`] maps the simulation's global time to the host's
//! monotonic time (its rate, no jumps) and wall time (offset, rate, jumps).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A sleep, as returned by [`Clock::sleep`].
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The time source of a node or a client.
pub trait Clock: Send + Sync {
    /// Monotonic time since an arbitrary origin of this host. Never jumps.
    fn now(&self) -> Duration;
    /// Wall-clock time, milliseconds since the Unix epoch. May jump.
    fn wall_ms(&self) -> i64;
    /// Wall-clock time in microseconds since the Unix epoch (`TIME`), in
    /// the millisecond `wall_ms` reads: by default that millisecond's
    /// first microsecond.
    fn wall_us(&self) -> i64 {
        self.wall_ms() * 1000
    }
    /// Completes once `d` has passed on this host's monotonic clock.
    fn sleep(&self, d: Duration) -> Sleep;
}

/// The machine's clocks: `Instant` and `SystemTime`, tokio's timer.
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn wall_ms(&self) -> i64 {
        // Real processes only: the simulation never builds a SystemClock.
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    fn wall_us(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64)
    }

    fn sleep(&self, d: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(d))
    }
}

/// One host's clocks as a function of global simulated time `g`.
///
/// Both clocks run at `rate` (1.0 is true time). Since the last rate change
/// at global time `base_g`, monotonic time is `mono_base + (g − base_g)·rate`
/// and wall time is `wall_base + (g − base_g)·rate`; jumps move `wall_base`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockModel {
    rate: f64,
    base_g: Duration,
    mono_base_ns: f64,
    wall_base_ms: f64,
}

impl ClockModel {
    /// A clock whose wall time at global time zero is `epoch_ms + offset_ms`.
    pub fn new(epoch_ms: i64, offset_ms: f64, rate: f64) -> Self {
        ClockModel {
            rate,
            base_g: Duration::ZERO,
            mono_base_ns: 0.0,
            wall_base_ms: epoch_ms as f64 + offset_ms,
        }
    }

    fn since_base_ns(&self, g: Duration) -> f64 {
        g.saturating_sub(self.base_g).as_nanos() as f64 * self.rate
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn mono_at(&self, g: Duration) -> Duration {
        Duration::from_nanos((self.mono_base_ns + self.since_base_ns(g)) as u64)
    }

    pub fn wall_ms_at(&self, g: Duration) -> i64 {
        (self.wall_base_ms + self.since_base_ns(g) / 1e6).floor() as i64
    }

    /// Wall time in microseconds, within the millisecond of
    /// [`ClockModel::wall_ms_at`].
    pub fn wall_us_at(&self, g: Duration) -> i64 {
        let ms = self.wall_ms_at(g);
        let us = (self.wall_base_ms * 1e3 + self.since_base_ns(g) / 1e3).floor() as i64;
        us.clamp(ms * 1000, ms * 1000 + 999)
    }

    /// Changes the rate from global time `g` on; both clocks stay continuous.
    pub fn set_rate(&mut self, g: Duration, rate: f64) {
        let since = self.since_base_ns(g);
        self.mono_base_ns += since;
        self.wall_base_ms += since / 1e6;
        self.base_g = self.base_g.max(g);
        self.rate = rate;
    }

    /// Steps the wall clock by `by_ms` (negative steps back).
    pub fn jump(&mut self, by_ms: f64) {
        self.wall_base_ms += by_ms;
    }

    /// How much global time passes while this clock's monotonic time advances
    /// by `d`, at the current rate (rounded up, so a sleep never ends early).
    pub fn global_for(&self, d: Duration) -> Duration {
        Duration::from_nanos((d.as_nanos() as f64 / self.rate).ceil() as u64)
    }
}

/// The wake-ups of a simulation's hosts: the deadline, in global time, of
/// every timer their code has armed (through [`SimClock`]) and that has not
/// fired or been dropped. Tokio does not tell when a runtime's next timer
/// falls; this does, and the driver skips the steps before the earliest.
///
/// A deadline is never later than its timer fires (tokio's wheel rounds up
/// to the next whole millisecond), and one stays while its task has not yet
/// run after it fired, so the earliest is a bound the driver may trust.
#[derive(Clone, Default)]
pub struct Wakeups(Arc<Mutex<WakeupSet>>);

#[derive(Default)]
struct WakeupSet {
    /// Each host's armed deadlines (with an id, to tell equal ones apart).
    armed: BTreeMap<Arc<str>, BTreeSet<(Duration, u64)>>,
    next_id: u64,
    /// Timers armed or fired, and [`Wakeups::touch`]es, so far.
    activity: u64,
    /// The start of the simulation's current step, and the first host
    /// that acted before it (see [`Wakeups::take_late`]).
    present: Duration,
    late: Option<String>,
}

impl Wakeups {
    /// Notes that a host did something (the simulation records each event
    /// here): across a span skipped as quiet, [`Wakeups::activity`] must
    /// not move.
    pub fn touch(&self) {
        self.set().activity += 1;
    }

    /// Notes that `host` acts at global time `at`: before the present, it
    /// was left behind with something due ([`Wakeups::take_late`]).
    pub fn check_late(&self, host: &str, at: Duration) {
        self.set().late_if(host, at);
    }

    /// Notes that the current step starts at global time `at`: a host that
    /// arms a timer or records an event before it was left behind with
    /// something due, which [`Wakeups::take_late`] then reports.
    pub fn set_present(&self, at: Duration) {
        self.set().present = at;
    }

    /// The first host that acted before the present, since the last call.
    pub fn take_late(&self) -> Option<String> {
        self.set().late.take()
    }

    /// How many timers were armed or fired, and touches made, so far.
    pub fn activity(&self) -> u64 {
        self.set().activity
    }

    /// Each host with a timer armed, with its earliest deadline, by name.
    pub fn earliest_by_host(&self) -> Vec<(Arc<str>, Duration)> {
        let set = self.set();
        set.armed
            .iter()
            .filter_map(|(h, a)| a.first().map(|(at, _)| (h.clone(), *at)))
            .collect()
    }

    fn arm(&self, host: &Arc<str>, at: Duration) -> Armed {
        let mut set = self.set();
        set.late_if(host, sim_now());
        set.next_id += 1;
        set.activity += 1;
        let key = (at, set.next_id);
        set.armed.entry(host.clone()).or_default().insert(key);
        Armed {
            wakeups: self.clone(),
            host: host.clone(),
            key,
        }
    }

    fn set(&self) -> std::sync::MutexGuard<'_, WakeupSet> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl WakeupSet {
    fn late_if(&mut self, host: &str, at: Duration) {
        if at < self.present && self.late.is_none() {
            self.late = Some(format!(
                "{host} acted at {at:?}, before the step at {:?}",
                self.present
            ));
        }
    }
}

/// One entry of [`Wakeups`], removed when dropped.
struct Armed {
    wakeups: Wakeups,
    host: Arc<str>,
    key: (Duration, u64),
}

impl Drop for Armed {
    fn drop(&mut self) {
        if let Some(a) = self.wakeups.set().armed.get_mut(&self.host) {
            a.remove(&self.key);
        }
    }
}

/// A simulated host's tokio timer whose deadline is in the run's
/// [`Wakeups`] from its making until it fires and its task sees it, or
/// it is dropped.
pub struct SimSleep {
    sleep: Pin<Box<tokio::time::Sleep>>,
    armed: Option<Armed>,
}

impl Future for SimSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::ready!(self.sleep.as_mut().poll(cx));
        if let Some(armed) = self.armed.take() {
            armed.wakeups.touch();
        }
        std::task::Poll::Ready(())
    }
}

/// A simulated host's clock, read by code running inside a turmoil host.
/// The simulation driver changes the shared model (rate, jumps) from outside.
///
/// It also knows the host's pause windows (stop-the-world pauses, in global
/// time): a timer that comes due inside one fires only when the pause ends,
/// as a stopped process handles its timers once it runs again. The clocks
/// themselves keep running.
#[derive(Clone)]
pub struct SimClock {
    model: Arc<Mutex<ClockModel>>,
    pauses: Arc<Mutex<Vec<(Duration, Duration)>>>,
    wakeups: Wakeups,
    host: Arc<str>,
}

impl SimClock {
    /// A clock whose timers are entered in a registry of its own.
    pub fn new(model: ClockModel) -> Self {
        Self::with_wakeups(model, Wakeups::default(), "host")
    }

    /// The clock of `host`, whose timers are entered in `wakeups` (one per
    /// run, shared by every host's clock).
    pub fn with_wakeups(model: ClockModel, wakeups: Wakeups, host: &str) -> Self {
        SimClock {
            model: Arc::new(Mutex::new(model)),
            pauses: Arc::default(),
            wakeups,
            host: host.into(),
        }
    }

    /// The registry this clock enters its timers in.
    pub fn wakeups(&self) -> &Wakeups {
        &self.wakeups
    }

    /// A timer that fires once `d` of global time has passed, entered in
    /// the run's wake-ups. Every timer of a simulated host is made here.
    pub fn timer(&self, d: Duration) -> SimSleep {
        SimSleep {
            sleep: Box::pin(tokio::time::sleep(d)),
            armed: Some(self.wakeups.arm(&self.host, sim_now() + d)),
        }
    }

    /// Adds a pause window `[start, end)` of global time.
    pub fn add_pause(&self, start: Duration, end: Duration) {
        self.pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((start, end));
    }

    /// Ends every pause at global time `g` (the paused process is gone: a
    /// crash); a later process on the host starts unpaused.
    pub fn end_pauses(&self, g: Duration) {
        let mut p = self.pauses.lock().unwrap_or_else(|e| e.into_inner());
        p.retain(|(s, _)| *s < g);
        for w in p.iter_mut() {
            w.1 = w.1.min(g);
        }
    }

    /// The end of the pause the host is in at global time `g`, if any.
    pub fn paused_until(&self, g: Duration) -> Option<Duration> {
        self.pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(s, e)| *s <= g && g < *e)
            .map(|(_, e)| *e)
            .max()
    }

    /// The shared model, for the driver to change rate or jump.
    pub fn model(&self) -> &Arc<Mutex<ClockModel>> {
        &self.model
    }

    fn with<T>(&self, f: impl FnOnce(&ClockModel) -> T) -> T {
        f(&self.model.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Global simulated time, read inside a turmoil host.
pub fn sim_now() -> Duration {
    turmoil::sim_elapsed().unwrap_or(Duration::ZERO)
}

impl Clock for SimClock {
    fn now(&self) -> Duration {
        let g = sim_now();
        self.with(|m| m.mono_at(g))
    }

    fn wall_ms(&self) -> i64 {
        let g = sim_now();
        self.with(|m| m.wall_ms_at(g))
    }

    fn wall_us(&self) -> i64 {
        let g = sim_now();
        self.with(|m| m.wall_us_at(g))
    }

    fn sleep(&self, d: Duration) -> Sleep {
        let clock = self.clone();
        Box::pin(async move {
            let target = clock.now() + d;
            // Re-check after each wake: the rate may change while we sleep.
            loop {
                let now = clock.now();
                if now >= target {
                    // Due inside a pause: it fires when the pause ends.
                    let g = sim_now();
                    match clock.paused_until(g) {
                        Some(until) => {
                            clock.timer(until - g).await;
                            continue;
                        }
                        None => return,
                    }
                }
                let g = clock.with(|m| m.global_for(target - now));
                clock.timer(g.max(Duration::from_micros(1))).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn rate_scales_both_clocks() {
        let m = ClockModel::new(1_000_000, 50.0, 1.5);
        assert_eq!(m.mono_at(2 * S), 3 * S);
        assert_eq!(m.wall_ms_at(2 * S), 1_000_000 + 50 + 3000);
    }

    #[test]
    fn rate_change_is_continuous_and_jumps_touch_only_wall() {
        let mut m = ClockModel::new(0, 0.0, 1.0);
        m.set_rate(10 * S, 2.0);
        assert_eq!(m.mono_at(10 * S), 10 * S);
        assert_eq!(m.mono_at(11 * S), 12 * S);
        m.jump(-5000.0);
        assert_eq!(m.mono_at(11 * S), 12 * S);
        assert_eq!(m.wall_ms_at(11 * S), 7000);
        assert_eq!(m.global_for(2 * S), S);
    }

    #[test]
    fn slow_clock_sleeps_longer_in_global_time() {
        let m = ClockModel::new(0, 0.0, 0.5);
        assert_eq!(m.global_for(S), 2 * S);
    }
}

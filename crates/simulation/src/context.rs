//! What every simulated host shares with the stepper: the history recorder,
//! each host's clock, pause windows, the sentinel's current master, the
//! fencing-token service, and the faults waiting on a trigger.
//!
//! Hosts run inside turmoil; they read global simulated time with
//! [`redlock_proto::clock::sim_now`]. The stepper reads and changes this context
//! between steps. Everything here is ordered (`BTreeMap`, `Vec`), so a run
//! depends on nothing but the scenario and the seed.

use redlock_engine::aim::Aimer;
use redlock_engine::due::{Due, Origin, Waiting};
use redlock_history::{EventKind, Recorder};
use redlock_proto::clock::{SimClock, Wakeups};
use redlock_scenario::{FaultAction, Target, Trigger, AIMED_EVENTS};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

#[derive(Default)]
struct State {
    master: String,
    waiting: Vec<Waiting>,
    /// Triggered faults, to be applied by the stepper in order.
    due: Vec<Due>,
    /// The aimed nemesis, when `[nemesis] aim = "lock"`.
    aimer: Option<Aimer>,
    /// Directed links a host held in the middle of a step for a fault due
    /// at that instant, for the stepper to bring to their wanted state.
    held: Vec<(String, String)>,
    /// The nodes that are down now (kept by the stepper).
    down: BTreeSet<String>,
}

/// The shared context of one run.
pub(crate) struct Context {
    pub(crate) recorder: Recorder,
    pub(crate) clocks: BTreeMap<String, SimClock>,
    /// The clocks' timers; every event recorded touches it.
    pub(crate) wakeups: Wakeups,
    /// The lock keys clients use (node events are recorded for these only).
    pub(crate) resources: Vec<String>,
    /// No new lock attempt starts after this global time.
    pub(crate) end: Duration,
    fence: AtomicU64,
    /// Whether an aimed nemesis follows the events (fixed for the run: a
    /// run without one never takes the state's lock to record an event).
    aimed: bool,
    state: Mutex<State>,
}

impl Context {
    pub(crate) fn new(
        recorder: Recorder,
        clocks: BTreeMap<String, SimClock>,
        resources: Vec<String>,
        end: Duration,
        master: String,
        waiting: Vec<Waiting>,
        aimer: Option<Aimer>,
    ) -> Arc<Self> {
        // Every clock of a run enters its timers in the same registry.
        let wakeups = clocks.values().next().expect("a host").wakeups().clone();
        Arc::new(Context {
            recorder,
            clocks,
            wakeups,
            resources,
            end,
            fence: AtomicU64::new(0),
            aimed: aimer.is_some(),
            state: Mutex::new(State {
                master,
                waiting,
                aimer,
                ..State::default()
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn clock(&self, host: &str) -> SimClock {
        self.clocks
            .get(host)
            .cloned()
            .expect("every host has a clock")
    }

    /// Records an event of `host` at the current global time, and releases
    /// the faults this event triggers. A triggered pause of the recording
    /// host takes effect at once, before the host runs another instruction.
    pub(crate) fn record(&self, host: &str, kind: EventKind) {
        let now = redlock_proto::clock::sim_now();
        self.wakeups.check_late(host, now);
        self.record_at(now, host, kind);
    }

    pub(crate) fn record_at(&self, time: Duration, host: &str, kind: EventKind) {
        self.wakeups.touch();
        let fired = match &kind {
            EventKind::Acquired { .. } => Some(Trigger::Acquired(host.to_string())),
            EventKind::Released { .. } => Some(Trigger::Released(host.to_string())),
            EventKind::Lost { .. } | EventKind::ValidityExpired { .. } => {
                Some(Trigger::Lost(host.to_string()))
            }
            _ => None,
        };
        if self.aimed {
            let mut st = self.state();
            let st = &mut *st;
            if let Some(aimer) = &mut st.aimer {
                let placed = aimer.on_event(time, host, &kind, &st.master);
                for due in placed.into_iter().map(Due::on_ms) {
                    self.hold_for(st, time, &due);
                    st.due.push(due);
                }
            }
        }
        let name = kind.name();
        self.recorder.record(time, host, kind);
        if fired.is_some() || AIMED_EVENTS.contains(&name) {
            self.release(time, host, name, fired.as_ref());
        }
    }

    /// Releases the faults waiting on the event `name` that `host` just
    /// recorded at `time`: those of an instant trigger ([`Trigger::Event`])
    /// first, as the aimed nemesis places its faults before the file's
    /// triggers release theirs, then those waiting on `fired`.
    fn release(&self, time: Duration, host: &str, name: &str, fired: Option<&Trigger>) {
        let at_event = |t: &Trigger| {
            matches!(t, Trigger::Event { host: h, event, from }
                if h == host && event == name && time >= *from)
        };
        let mut st = self.state();
        if st.waiting.is_empty() {
            return;
        }
        let (mut now_due, still): (Vec<Waiting>, Vec<Waiting>) = std::mem::take(&mut st.waiting)
            .into_iter()
            .partition(|w| at_event(&w.trigger) || Some(&w.trigger) == fired);
        st.waiting = still;
        now_due.sort_by_key(|w| !matches!(w.trigger, Trigger::Event { .. }));
        for w in now_due {
            let instant = matches!(w.trigger, Trigger::Event { .. });
            // Due on a whole millisecond, as the stepper has it.
            let due = Due {
                time: time + w.at,
                action: w.action,
                origin: Origin::File(w.index),
                placed: None,
            }
            .on_ms();
            // The recording host's own pause stops it before its next
            // instruction; any other host's waits for the stepper, which
            // skips it if that host is down. An instant trigger's pause
            // waits for the stepper too, as the aimed nemesis's does.
            if let FaultAction::Pause {
                host: redlock_scenario::Target::Host(h),
                for_,
            } = &due.action
            {
                if h == host && !instant {
                    self.add_pause(h, due.time, due.time + *for_);
                }
            }
            self.hold_for(&mut st, time, &due);
            st.due.push(due);
        }
    }

    /// A fault released by an event is due at the event's instant when its
    /// offset is zero (every fault time is rounded up to a whole millisecond,
    /// and events fall on whole milliseconds when latencies do), but the
    /// stepper applies faults between steps, after the hosts have run the rest
    /// of this one. What they can do in it that the fault must catch is send:
    /// so, from inside the host, this holds every link the fault cuts or
    /// slows (a crashed node's and an isolated host's both ways, a
    /// partition's cut directions, a slowed link both ways), and the stepper,
    /// applying the fault as of `time`, then brings those links to their
    /// wanted state; a message sent after the event meets the fault as if it
    /// had been in place (a slowed link times it from its sending). Nothing
    /// is held outside a host's step (the stepper records events too) or for
    /// a fault due later.
    fn hold_for(&self, st: &mut State, time: Duration, due: &Due) {
        // Released by the event at `time`, or placed from it: never before.
        assert!(
            due.time >= time,
            "sim: a fault due at {:?}, before the event at {time:?} that released it",
            due.time
        );
        if due.time > time || !turmoil::in_simulation() {
            return;
        }
        for (from, to) in self.links_of(st, &due.action) {
            turmoil::hold_oneway(from.as_str(), to.as_str());
            st.held.push((from, to));
        }
    }

    /// The directed links `action` cuts or slows: both directions, but side
    /// 1 -> side 2 only for a one-way partition; none for a crash of a node
    /// that is down (the stepper skips it).
    fn links_of(&self, st: &State, action: &FaultAction) -> Vec<(String, String)> {
        let master = st.master.as_str();
        let resolve = |t: &Target| match t {
            Target::Host(h) => h.clone(),
            Target::Master => master.to_string(),
        };
        let pairs: Vec<(String, String)> = match action {
            FaultAction::Crash { host, .. } if st.down.contains(&resolve(host)) => Vec::new(),
            FaultAction::Crash { host, .. } | FaultAction::Isolate { host, .. } => {
                let h = resolve(host);
                let others = self.clocks.keys().filter(|o| **o != h);
                others.map(|o| (h.clone(), o.clone())).collect()
            }
            FaultAction::Partition { sides, .. } => sides
                .iter()
                .enumerate()
                .flat_map(|(i, a)| sides[i + 1..].iter().map(move |b| (a, b)))
                .flat_map(|(a, b)| {
                    a.iter()
                        .flat_map(|x| b.iter().map(|y| (x.clone(), y.clone())))
                })
                .collect(),
            FaultAction::Latency { between, .. } => vec![between.clone()],
            FaultAction::Restart { .. }
            | FaultAction::Heal
            | FaultAction::Pause { .. }
            | FaultAction::ClockJump { .. }
            | FaultAction::ClockRate { .. } => Vec::new(),
        };
        let oneway = matches!(action, FaultAction::Partition { oneway: true, .. });
        assert!(
            pairs.iter().all(|(a, b)| a != b),
            "sim: a fault that holds a link from a host to itself: {action:?}"
        );
        pairs
            .into_iter()
            .flat_map(|(a, b)| {
                let back = (!oneway).then(|| (b.clone(), a.clone()));
                std::iter::once((a, b)).chain(back)
            })
            .collect()
    }

    /// Takes the links hosts held since the last call ([`Self::hold_for`]).
    pub(crate) fn take_held(&self) -> Vec<(String, String)> {
        std::mem::take(&mut self.state().held)
    }

    /// Takes the triggered faults released since the last call.
    pub(crate) fn take_due(&self) -> Vec<Due> {
        std::mem::take(&mut self.state().due)
    }

    /// Adds a pause window for `host` (kept by its clock: its timers and,
    /// through [`super::pause`], its sockets wait the pause out).
    pub(crate) fn add_pause(&self, host: &str, start: Duration, end: Duration) {
        assert!(start <= end, "sim: {host} paused from {start:?} to {end:?}");
        self.clock(host).add_pause(start, end);
    }

    /// The end of the pause `host` is in at global time `now`, if any.
    pub(crate) fn paused_until(&self, host: &str, now: Duration) -> Option<Duration> {
        self.clock(host).paused_until(now)
    }

    /// Waits while `host` is paused (a stop-the-world pause: it runs nothing;
    /// its clocks keep running).
    pub(crate) async fn pause_point(&self, host: &str) {
        while let Some(until) = self.paused_until(host, redlock_proto::clock::sim_now()) {
            let clock = self.clock(host);
            clock.timer(until - redlock_proto::clock::sim_now()).await;
        }
    }

    /// Notes that `node` went down or came back (for the aimed nemesis, if
    /// any, and for the links a fault released in a host holds).
    pub(crate) fn node_down(&self, node: &str, down: bool) {
        let mut st = self.state();
        // The engine crashes only nodes that are up, restarts only those down.
        if down {
            assert!(
                st.down.insert(node.to_string()),
                "sim: {node} went down twice"
            );
        } else {
            assert!(st.down.remove(node), "sim: {node} came back while up");
        }
        if let Some(aimer) = &mut st.aimer {
            aimer.node_down(node, down);
        }
    }

    pub(crate) fn master(&self) -> String {
        self.state().master.clone()
    }

    pub(crate) fn set_master(&self, name: &str) {
        self.state().master = name.to_string();
    }

    /// The next fencing token of the ideal consensus service: 1, 2, 3, ...
    pub(crate) fn next_fence(&self) -> u64 {
        self.fence.fetch_add(1, Ordering::SeqCst) + 1
    }
}

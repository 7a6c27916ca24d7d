//! Generated histories for the property test: a list of [`Step`]s, each
//! drawn by proptest (so a failing case shrinks to a few steps), played by
//! a [`Builder`] that keeps the history valid and in time order, the shape
//! the simulation records: clients call, acquire (ids 1, 2, 3, ...), write,
//! extend, lose and release; the store applies or refuses writes, possibly
//! after later acquisitions; clocks change rate. Steps that do not fit the
//! state (a client acquiring with no call open) are skipped.
//!
//! The edge cases come from small numbers: time moves by 0 to 3 ms, so
//! several events share an instant (an acquisition and a write applied at
//! once, in either order); a step moves time to a client's validity end
//! exactly, to release or write there; validities may be 0 ms.
//!
//! Clock rates are 0.5, 1 and 2: a validity moved by a rate change is then
//! an exact number of ns however it is computed, so the two checkers'
//! different arithmetic cannot differ by a rounding.

use std::time::Duration;

use proptest::prelude::*;

use redlock_history::{Event, EventKind, FaultEvent, History};

const CLIENTS: [&str; 3] = ["c1", "c2", "c3"];
const RESOURCES: [&str; 2] = ["lock-a", "lock-b"];
const RATES: [f64; 3] = [0.5, 1.0, 2.0];

/// One thing that may happen next; `u8` fields pick a client (among those
/// the step fits), a resource, a write in flight or a length, modulo what
/// there is.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// Time moves on by 0 to 3 ms.
    Wait(u8),
    /// A client moves time to the end of its latest validity, if ahead.
    ToValidityEnd(u8),
    Call(u8, u8),
    /// Acquired, with a validity of the given ms on the client's clock.
    Acquire(u8, u8),
    Fail(u8),
    Send(u8),
    /// The store applies a write in flight.
    Apply(u8),
    /// The store refuses a write in flight (fencing).
    Reject(u8),
    /// The store applies a write the history shows no `write_sent` for.
    ApplyUnsent(u8),
    /// The client gives up on a write whose connection never opened
    /// (`write_abandoned`): it never reaches the store.
    Abandon(u8),
    /// The watchdog extends to the given ms from now.
    Extend(u8, u8),
    /// `lost`, `validity_expired` or `reentry_failed`.
    Lose(u8, u8),
    Reenter(u8),
    /// `release_start` (and `released` at the same instant).
    Release(u8),
    /// The client forgets its lock without a word and may call again.
    Forget(u8),
    /// The client leaves its lock call without an outcome.
    ForgetCall(u8),
    ClockRate(u8, u8),
    /// An event neither checker reads (`node_up`), or `end`.
    Other(bool),
}

fn step() -> impl Strategy<Value = Step> {
    let n = || 0u8..8;
    prop_oneof![
        6 => (0u8..4).prop_map(Step::Wait),
        1 => n().prop_map(Step::ToValidityEnd),
        4 => (n(), n()).prop_map(|(c, r)| Step::Call(c, r)),
        4 => (n(), 0u8..12).prop_map(|(c, v)| Step::Acquire(c, v)),
        1 => n().prop_map(Step::Fail),
        4 => n().prop_map(Step::Send),
        4 => n().prop_map(Step::Apply),
        1 => n().prop_map(Step::Reject),
        1 => n().prop_map(Step::ApplyUnsent),
        1 => n().prop_map(Step::Abandon),
        1 => (n(), 0u8..12).prop_map(|(c, v)| Step::Extend(c, v)),
        1 => (n(), n()).prop_map(|(c, k)| Step::Lose(c, k)),
        1 => n().prop_map(Step::Reenter),
        3 => n().prop_map(Step::Release),
        1 => n().prop_map(Step::Forget),
        1 => n().prop_map(Step::ForgetCall),
        1 => (n(), n()).prop_map(|(c, r)| Step::ClockRate(c, r)),
        1 => any::<bool>().prop_map(Step::Other),
    ]
}

/// Histories of up to `max_steps` steps, with fencing on or off.
pub(super) fn histories(max_steps: usize) -> impl Strategy<Value = History> {
    (
        any::<bool>(),
        proptest::collection::vec(step(), 0..max_steps),
    )
        .prop_map(|(fencing, steps)| Builder::play(fencing, &steps))
}

/// Where a client is.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Idle,
    Calling { resource: usize },
    Holding { acq: u64, resource: usize },
}

#[derive(Clone, Copy)]
struct Client {
    phase: Phase,
    calls: u64,
    acquisitions: u64,
    /// The next write's `seq` within the acquisition held.
    seq: u32,
    fence: Option<u64>,
    rate: f64,
    /// The end of the latest validity, in global time.
    valid_until: Option<Duration>,
}

/// A write sent and not yet applied or refused.
#[derive(Clone, Copy)]
struct InFlight {
    client: usize,
    acq: u64,
    seq: u32,
    resource: usize,
    fence: Option<u64>,
}

/// Plays steps into a valid history.
pub(super) struct Builder {
    now: Duration,
    events: Vec<Event>,
    clients: [Client; 3],
    in_flight: Vec<InFlight>,
    fencing: bool,
    /// The highest fencing token given and refused by the store so far.
    fences: u64,
}

impl Builder {
    pub(super) fn play(fencing: bool, steps: &[Step]) -> History {
        let idle = Client {
            phase: Phase::Idle,
            calls: 0,
            acquisitions: 0,
            seq: 1,
            fence: None,
            rate: 1.0,
            valid_until: None,
        };
        let mut b = Builder {
            now: Duration::ZERO,
            events: Vec::new(),
            clients: [idle; 3],
            in_flight: Vec::new(),
            fencing,
            fences: 0,
        };
        for s in steps {
            b.step(s);
        }
        History { events: b.events }
    }

    fn record(&mut self, host: &str, kind: EventKind) {
        self.events.push(Event {
            time: self.now,
            host: host.to_string(),
            kind,
        });
    }

    fn step(&mut self, s: &Step) {
        let any = |c: &u8| *c as usize % CLIENTS.len();
        let idle = |c: &u8| self.pick(*c, |p| p == Phase::Idle);
        let calling = |c: &u8| self.pick(*c, |p| matches!(p, Phase::Calling { .. }));
        let holding = |c: &u8| self.pick(*c, |p| matches!(p, Phase::Holding { .. }));
        match s {
            Step::Wait(ms) => self.now += Duration::from_millis(*ms as u64),
            Step::ToValidityEnd(c) => self.jump_to_validity_end(any(c)),
            Step::Call(c, r) => self.call(idle(c), *r as usize % RESOURCES.len()),
            Step::Acquire(c, ms) => self.acquire(calling(c), *ms),
            Step::Fail(c) => self.fail(calling(c)),
            Step::Send(c) => self.send(holding(c)),
            Step::Apply(w) => self.apply(*w as usize, false),
            Step::Reject(w) => self.apply(*w as usize, true),
            Step::ApplyUnsent(c) => self.apply_unsent(holding(c)),
            Step::Abandon(c) => self.abandon(holding(c)),
            Step::Extend(c, ms) => self.extend(holding(c), *ms),
            Step::Lose(c, k) => self.lose(holding(c), *k),
            Step::Reenter(c) => self.reenter(holding(c)),
            Step::Release(c) => self.release(holding(c)),
            Step::Forget(c) => self.forget(holding(c), false),
            Step::ForgetCall(c) => self.forget(calling(c), true),
            Step::ClockRate(c, r) => self.clock_rate(any(c), RATES[*r as usize % RATES.len()]),
            Step::Other(end) => {
                let kind = if *end {
                    EventKind::End
                } else {
                    EventKind::NodeUp { keys: 0 }
                };
                self.record(if *end { "driver" } else { "n1" }, kind);
            }
        }
    }

    /// The `n`th (modulo) of the clients in a phase that `fits`, so that
    /// most steps apply; any client when none fits (the step is skipped).
    fn pick(&self, n: u8, fits: fn(Phase) -> bool) -> usize {
        let fit: Vec<usize> = (0..CLIENTS.len())
            .filter(|&c| fits(self.clients[c].phase))
            .collect();
        match fit.len() {
            0 => n as usize % CLIENTS.len(),
            k => fit[n as usize % k],
        }
    }

    /// `ms` on client `c`'s clock, in global time.
    fn global(&self, c: usize, ms: u8) -> Duration {
        Duration::from_nanos((ms as f64 * 1e6 / self.clients[c].rate) as u64)
    }

    fn jump_to_validity_end(&mut self, c: usize) {
        if let Some(t) = self.clients[c].valid_until {
            self.now = self.now.max(t);
        }
    }

    fn call(&mut self, c: usize, resource: usize) {
        let me = &mut self.clients[c];
        if me.phase != Phase::Idle {
            return;
        }
        me.calls += 1;
        me.phase = Phase::Calling { resource };
        let call = me.calls;
        let kind = EventKind::LockCall {
            call,
            resource: RESOURCES[resource].to_string(),
        };
        self.record(CLIENTS[c], kind);
    }

    fn acquire(&mut self, c: usize, validity_ms: u8) {
        let Phase::Calling { resource } = self.clients[c].phase else {
            return;
        };
        let valid_until = self.now + self.global(c, validity_ms);
        let fence = self.fencing.then(|| {
            self.fences += 1;
            self.fences
        });
        let me = &mut self.clients[c];
        me.acquisitions += 1;
        let acq = me.acquisitions;
        me.phase = Phase::Holding { acq, resource };
        me.seq = 1;
        me.fence = fence;
        me.valid_until = Some(valid_until);
        let kind = EventKind::Acquired {
            acq,
            resource: RESOURCES[resource].to_string(),
            token: format!("{}-{acq}", CLIENTS[c]),
            validity: Duration::from_millis(validity_ms as u64),
            valid_until,
            nodes: 3,
            fence,
        };
        self.record(CLIENTS[c], kind);
    }

    fn fail(&mut self, c: usize) {
        if let Phase::Calling { .. } = self.clients[c].phase {
            self.clients[c].phase = Phase::Idle;
            let call = self.clients[c].calls;
            let reason = "no quorum".to_string();
            self.record(CLIENTS[c], EventKind::LockFailed { call, reason });
        }
    }

    /// The acquisition `c` holds, with its next write's `seq`, counted.
    fn next_write(&mut self, c: usize) -> Option<InFlight> {
        let Phase::Holding { acq, resource } = self.clients[c].phase else {
            return None;
        };
        let me = &mut self.clients[c];
        me.seq += 1;
        Some(InFlight {
            client: c,
            acq,
            seq: me.seq - 1,
            resource,
            fence: me.fence,
        })
    }

    fn send(&mut self, c: usize) {
        if let Some(w) = self.next_write(c) {
            self.in_flight.push(w);
            let (acq, seq) = (w.acq, w.seq);
            self.record(CLIENTS[c], EventKind::WriteSent { acq, seq });
        }
    }

    fn abandon(&mut self, c: usize) {
        if let Some(w) = self.next_write(c) {
            let (acq, seq) = (w.acq, w.seq);
            self.record(CLIENTS[c], EventKind::WriteAbandoned { acq, seq });
        }
    }

    fn apply_unsent(&mut self, c: usize) {
        if let Some(w) = self.next_write(c) {
            self.store(w, false);
        }
    }

    fn apply(&mut self, pick: usize, refuse: bool) {
        if !self.in_flight.is_empty() {
            let w = self.in_flight.remove(pick % self.in_flight.len());
            self.store(w, refuse && w.fence.is_some());
        }
    }

    /// The store applies `w`, or refuses it.
    fn store(&mut self, w: InFlight, refuse: bool) {
        let client = CLIENTS[w.client].to_string();
        let resource = RESOURCES[w.resource].to_string();
        let (acq, seq) = (w.acq, w.seq);
        let kind = match w.fence {
            Some(fence) if refuse => EventKind::WriteRejected {
                client,
                acq,
                seq,
                fence,
                highest: self.fences,
                resource,
            },
            fence => EventKind::WriteApplied {
                client,
                acq,
                seq,
                fence,
                resource,
            },
        };
        self.record("store", kind);
    }

    fn extend(&mut self, c: usize, validity_ms: u8) {
        if let Phase::Holding { acq, .. } = self.clients[c].phase {
            let valid_until = self.now + self.global(c, validity_ms);
            self.clients[c].valid_until = Some(valid_until);
            let validity = Duration::from_millis(validity_ms as u64);
            let kind = EventKind::Extended {
                acq,
                validity,
                valid_until,
            };
            self.record(CLIENTS[c], kind);
        }
    }

    fn lose(&mut self, c: usize, which: u8) {
        let Phase::Holding { acq, .. } = self.clients[c].phase else {
            return;
        };
        let kind = match which % 3 {
            0 => EventKind::Lost {
                acq,
                reason: "extension failed".into(),
            },
            1 => EventKind::ValidityExpired { acq },
            _ => EventKind::ReentryFailed {
                acq,
                depth: 2,
                reason: "lost".into(),
            },
        };
        self.record(CLIENTS[c], kind);
    }

    fn reenter(&mut self, c: usize) {
        if let Phase::Holding { acq, .. } = self.clients[c].phase {
            let kind = EventKind::Reentered {
                acq,
                depth: 2,
                nodes: 3,
            };
            self.record(CLIENTS[c], kind);
        }
    }

    /// A lock held may be forgotten; a lock call too, rarely (the
    /// simulation never leaves one, a hand-written history may).
    fn forget(&mut self, c: usize, call_too: bool) {
        match self.clients[c].phase {
            Phase::Holding { .. } => self.clients[c].phase = Phase::Idle,
            Phase::Calling { .. } if call_too => self.clients[c].phase = Phase::Idle,
            _ => {}
        }
    }

    fn release(&mut self, c: usize) {
        if let Phase::Holding { acq, .. } = self.clients[c].phase {
            self.clients[c].phase = Phase::Idle;
            self.record(CLIENTS[c], EventKind::ReleaseStart { acq });
            self.record(CLIENTS[c], EventKind::Released { acq, nodes: 3 });
        }
    }

    /// Client `c`'s clock runs at `rate` from now on: the end of its
    /// validity moves (the validity is on its own clock).
    fn clock_rate(&mut self, c: usize, rate: f64) {
        let me = &mut self.clients[c];
        let from = me.rate;
        me.rate = rate;
        if let Some(t) = me.valid_until.filter(|t| *t > self.now) {
            let left = (t - self.now).as_nanos() as f64 * from / rate;
            me.valid_until = Some(self.now + Duration::from_nanos(left as u64));
        }
        let fault = FaultEvent::ClockRate {
            host: CLIENTS[c].to_string(),
            rate,
            from,
        };
        self.record("driver", EventKind::Fault(fault));
    }
}

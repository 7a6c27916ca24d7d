//! Where a lab run's wall time goes: the marks [`super::run`] sets as a
//! run goes (servers up, clients ready, the end, the last exit), and the
//! phases they make.

use std::time::{Duration, Instant};

/// Where a lab run's wall time went, phase by phase, in the order they
/// follow one another (each ends where the next begins).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Servers (with real servers: started, replicas synced, sentinel
    /// watching), store and links up.
    pub servers: Duration,
    /// The clients launched until the last said `READY` (their runtime's
    /// start and warm-up): the run's clock starts at its end.
    pub ready: Duration,
    /// The scenario's `duration`, on the run's clock.
    pub scenario: Duration,
    /// From the end until the last client exited (at most two TTLs).
    pub after_end: Duration,
    /// The clients still running stopped, servers and links closed.
    pub stop: Duration,
}

impl Phases {
    /// Their sum: the run's wall time but the judging.
    pub fn total(&self) -> Duration {
        self.servers + self.ready + self.scenario + self.after_end + self.stop
    }
}

/// When each phase of a run ended, as it goes.
pub(crate) struct Marks {
    begun: Instant,
    servers: Instant,
    pub(crate) ready: Instant,
    pub(crate) end: Instant,
    pub(crate) exited: Instant,
}

impl Marks {
    /// Marks of a run begun at `begun` whose servers are up now.
    pub(crate) fn from(begun: Instant) -> Marks {
        let now = Instant::now();
        Marks {
            begun,
            servers: now,
            ready: now,
            end: now,
            exited: now,
        }
    }

    /// The phases of a run stopped now: each mark was set after the one
    /// before (the end before the exits: `drive` records the end in the
    /// step it is due, before it looks at the limit two TTLs later).
    pub(crate) fn phases(&self) -> Phases {
        let m = [self.begun, self.servers, self.ready, self.end, self.exited];
        assert!(
            m.windows(2).all(|w| w[0] <= w[1]),
            "a run's phases in order"
        );
        Phases {
            servers: self.servers - self.begun,
            ready: self.ready - self.servers,
            scenario: self.end - self.ready,
            after_end: self.exited - self.end,
            stop: self.exited.elapsed(),
        }
    }
}

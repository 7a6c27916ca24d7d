//! Faults with a time: one due at a global time ([`Due`]), one the driver
//! applied ([`Applied`]), and where each came from ([`Origin`]). Shared by
//! the context, the nemesis (random and aimed) and the driver.

use redlock_scenario::{FaultAction, Trigger};
use std::time::Duration;

/// Where a fault comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The file's `[[faults]]` entry of this index (0-based).
    File(usize),
    /// The `[nemesis]`.
    Nemesis,
}

/// The history event at which the aimed nemesis placed a fault: the host
/// that recorded it, its kind (`EventKind::name`) and its instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    pub host: String,
    pub event: &'static str,
    pub time: Duration,
}

/// A fault waiting for its trigger (`after = "c1:acquired"`).
#[derive(Clone, Debug)]
pub struct Waiting {
    pub trigger: Trigger,
    pub at: Duration,
    pub action: FaultAction,
    /// Index of the fault in the file's `[[faults]]`.
    pub index: usize,
}

/// A fault due at a global time.
#[derive(Clone, Debug)]
pub struct Due {
    pub time: Duration,
    pub action: FaultAction,
    pub origin: Origin,
    /// The event that placed it, for a fault of the aimed nemesis.
    pub placed: Option<Placed>,
}

impl Due {
    /// The same fault, due at the next whole millisecond ([`on_ms`]).
    pub fn on_ms(self) -> Due {
        Due {
            time: on_ms(self.time),
            ..self
        }
    }
}

/// A fault the driver applied (not one it skipped because it could do
/// nothing): when it was due, what it did, where it came from. Replaying a
/// run with these as the file's only faults, each at its `time` from the
/// start, applies the same faults at the same ticks.
///
/// One exception: a fault released by an event at that event's own instant
/// (in the middle of a step) is applied at the end of the step, as of its
/// time, the links it cuts held from the event on (see
/// `Context::hold_for`); a fault due at that time from the start is applied
/// before the step. `placed` says which event it was, for the aimed
/// nemesis's faults, so that a replay can release it there again.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub time: Duration,
    pub action: FaultAction,
    pub origin: Origin,
    pub placed: Option<Placed>,
}

/// `d` rounded up to a whole millisecond. Every timer of the simulation
/// falls on one: the hosts' because tokio's timer wheel counts whole
/// milliseconds, the driver's (faults due, heals, restarts) because it
/// rounds them so, so that a fault drawn at 631.5 ms happens at 632 ms at
/// any `tick` that divides a millisecond, never at 631.5 ms at one and
/// 632 ms at another.
pub fn on_ms(d: Duration) -> Duration {
    let ms = Duration::from_millis(1);
    let rest = d.as_nanos() % ms.as_nanos();
    let up = if rest == 0 {
        d
    } else {
        d + ms - Duration::from_nanos(rest as u64)
    };
    assert!(
        up >= d && up - d < ms,
        "on_ms: {d:?} moved to {up:?}, not up to the next whole millisecond"
    );
    assert_eq!(
        up.subsec_nanos() % 1_000_000,
        0,
        "on_ms: {d:?} rounded to {up:?}, not a whole millisecond"
    );
    up
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_up_to_whole_milliseconds() {
        let us = Duration::from_micros;
        assert_eq!(on_ms(us(631_500)), us(632_000));
        assert_eq!(on_ms(us(632_000)), us(632_000));
        assert_eq!(on_ms(us(1)), us(1_000));
        assert_eq!(on_ms(Duration::ZERO), Duration::ZERO);
    }
}

//! Faults with a time: one due at a global time ([`Due`]), one the driver
//! applied ([`Applied`]), and where each came from ([`Origin`]). Shared by
//! the context, the nemesis (random and aimed) and the driver.

use crate::scenario::FaultAction;
use std::time::Duration;

/// Where a fault comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The file's `[[faults]]` entry of this index (0-based).
    File(usize),
    /// The `[nemesis]`.
    Nemesis,
}

/// A fault due at a global time.
#[derive(Clone, Debug)]
pub struct Due {
    pub time: Duration,
    pub action: FaultAction,
    pub origin: Origin,
}

/// A fault the driver applied (not one it skipped because it could do
/// nothing): when it was due, what it did, where it came from. Replaying a
/// run with these as the file's only faults, each at its `time` from the
/// start, applies the same faults at the same ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub time: Duration,
    pub action: FaultAction,
    pub origin: Origin,
}

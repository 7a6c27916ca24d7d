//! A failover's state, as Redis Sentinel keeps it on the master
//! (`failover_state`, `failover_state_change_time`, `failover_start_time`,
//! `failover_epoch`, `promoted_slave`): read by the monitor's ticks and
//! `get-master-addr-by-name`, moved by [`super::failover`].

use std::time::Duration;

/// `SENTINEL_FAILOVER_STATE_*`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum State {
    #[default]
    None,
    WaitStart,
    SelectSlave,
    SendSlaveofNoone,
    WaitPromotion,
    ReconfSlaves,
    UpdateConfig,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Failover {
    pub(crate) state: State,
    pub(crate) change_time: Duration,
    /// When the last failover started, desync included (none yet: None).
    pub(crate) start_time: Option<Duration>,
    pub(crate) epoch: u64,
    /// The replica chosen, by its place.
    pub(crate) promoted: Option<usize>,
}

impl Failover {
    pub(crate) fn in_progress(&self) -> bool {
        self.state != State::None
    }
}

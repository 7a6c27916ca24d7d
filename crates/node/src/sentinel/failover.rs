//! The failover, as Redis Sentinel 7.0 runs it for a master of quorum 1
//! watched by one sentinel (`sentinel.c`: `sentinelCheckObjectivelyDown`,
//! `sentinelStartFailoverIfNeeded`, `sentinelFailoverStateMachine` and
//! what the replicas' `INFO` replies move on).
//!
//! Objective down comes with subjective down (the quorum is this
//! sentinel). The failover starts in the same tick, and this sentinel,
//! the only voter, is elected in it too; then one state per tick: select
//! the replica (not down, linked, answering in the last 5 s, priority not
//! 0, `INFO` fresher than 5 s; lower priority, then higher replication
//! offset, then smaller run id, then the walking order), send it `SLAVEOF
//! NO ONE`, and wait for its `INFO` to report it a master (polled every
//! second). From then on `get-master-addr-by-name` names it
//! (`+promoted-slave`). The other replicas are sent `SLAVEOF <promoted>`
//! one at a time (parallel-syncs 1), each done when its `INFO` shows the
//! new master with its link up; when all are done (or at the failover
//! timeout) the failover ends and the master is switched (`+switch-master`):
//! the old master becomes a replica entry, re-pointed 8 s after it is seen
//! back as a master (`+convert-to-slave`). Replicas found replicating
//! another master are re-pointed once the master looks sane for the
//! failover timeout (`+fix-slave-config`). A failover may start again two
//! failover timeouts after the previous one started.

use super::instance::{Reconf, Role};
use super::link::PING_PERIOD;
use super::monitor::{shuffle, Sentinel, Which, INFO_PERIOD};
use super::state::{Failover, State};
use rand::Rng;
use std::time::Duration;

/// `failover-timeout`: the lab's `redis-sentinel` is configured with the
/// same.
pub const FAILOVER_TIMEOUT: Duration = Duration::from_secs(3);
/// `SENTINEL_MAX_DESYNC`: the random delay added to a failover's start
/// time.
const MAX_DESYNC_MS: u64 = 1000;
/// `parallel-syncs`.
const PARALLEL_SYNCS: usize = 1;
/// `sentinel_slave_reconf_timeout`.
const SLAVE_RECONF_TIMEOUT: Duration = Duration::from_secs(10);
/// `sentinel_publish_period * 4`: how long a replica must have reported
/// itself a master before it is converted back.
const CONVERT_WAIT: Duration = Duration::from_secs(8);

impl Sentinel {
    /// `sentinelCheckObjectivelyDown` with a quorum of 1.
    pub(crate) fn check_objectively_down(&mut self, now: Duration) {
        let odown = self.master.s_down;
        if odown && !self.o_down {
            self.o_down = true;
            self.o_down_since = Some(now);
            self.event("+odown", None, " #quorum 1/1".into());
        } else if !odown && self.o_down {
            self.o_down = false;
            self.event("-odown", None, String::new());
        }
    }

    /// `sentinelStartFailoverIfNeeded` and `sentinelStartFailover`.
    pub(crate) fn start_failover_if_needed(&mut self, now: Duration) {
        if !self.fails_over || !self.o_down || self.failover.in_progress() {
            return;
        }
        if self
            .failover
            .start_time
            .is_some_and(|t| now.saturating_sub(t) < 2 * FAILOVER_TIMEOUT)
        {
            return;
        }
        self.current_epoch += 1;
        let desync = Duration::from_millis(self.rng.random_range(0..MAX_DESYNC_MS));
        self.failover = Failover {
            state: State::WaitStart,
            change_time: now,
            start_time: Some(now + desync),
            epoch: self.current_epoch,
            promoted: None,
        };
        let epoch = self.current_epoch.to_string();
        self.event("+new-epoch", None, epoch.clone());
        self.event("+try-failover", None, String::new());
    }

    /// `sentinelFailoverStateMachine`: one state on.
    pub(crate) fn failover_state_machine(&mut self, now: Duration) {
        match self.failover.state {
            State::WaitStart => {
                let vote = format!("{} {}", self.myid, self.failover.epoch);
                self.event("+vote-for-leader", None, vote);
                self.event("+elected-leader", None, String::new());
                self.enter(
                    State::SelectSlave,
                    "+failover-state-select-slave",
                    None,
                    now,
                );
            }
            State::SelectSlave => match self.select_slave(now) {
                None => {
                    self.event("-failover-abort-no-good-slave", None, String::new());
                    self.abort(now);
                }
                Some(i) => {
                    self.replicas[i].promoted = true;
                    self.failover.promoted = Some(i);
                    let p = Which::Replica(i);
                    self.instance_event("+selected-slave", p, String::new());
                    let name = "+failover-state-send-slaveof-noone";
                    self.enter(State::SendSlaveofNoone, name, Some(p), now);
                }
            },
            State::SendSlaveofNoone => self.send_slaveof_noone(now),
            State::WaitPromotion => self.abort_if_late(now),
            State::ReconfSlaves => {
                self.reconf_next_slave(now);
                self.detect_end(now);
            }
            State::None | State::UpdateConfig => {}
        }
    }

    /// The failover moves to `state`, announced as `name` about the
    /// replica `about` (the master when `None`).
    fn enter(&mut self, state: State, name: &'static str, about: Option<Which>, now: Duration) {
        assert!(state > self.failover.state, "a failover went back a state");
        self.failover.state = state;
        self.failover.change_time = now;
        match about {
            None => self.event(name, None, String::new()),
            Some(w) => self.instance_event(name, w, String::new()),
        }
    }

    fn promoted(&self) -> Which {
        Which::Replica(self.failover.promoted.expect("a replica was selected"))
    }

    /// `sentinelFailoverSendSlaveOfNoOne`.
    fn send_slaveof_noone(&mut self, now: Duration) {
        let p = self.promoted();
        if self.get(p).link.disconnected() {
            return self.abort_if_late(now);
        }
        if self.send_slave_of(p, None) {
            self.enter(
                State::WaitPromotion,
                "+failover-state-wait-promotion",
                Some(p),
                now,
            );
        }
    }

    /// `-failover-abort-slave-timeout` past the failover timeout.
    fn abort_if_late(&mut self, now: Duration) {
        if now.saturating_sub(self.failover.change_time) > FAILOVER_TIMEOUT {
            self.event("-failover-abort-slave-timeout", None, String::new());
            self.abort(now);
        }
    }

    /// `sentinelAbortFailover`.
    fn abort(&mut self, now: Duration) {
        assert!(
            self.failover.state <= State::WaitPromotion,
            "a failover aborted after its promotion"
        );
        if let Some(p) = self.failover.promoted.take() {
            self.replicas[p].promoted = false;
        }
        self.failover.state = State::None;
        self.failover.change_time = now;
    }

    /// `sentinelSelectSlave`: the best replica to promote, if any.
    fn select_slave(&self, now: Duration) -> Option<usize> {
        let since = |t: Duration| now.saturating_sub(t);
        let m = &self.master;
        let max_master_down = m
            .s_down_since
            .filter(|_| m.s_down)
            .map_or(Duration::ZERO, since)
            + self.down_after * 10;
        let validity = if m.s_down {
            5 * PING_PERIOD
        } else {
            3 * INFO_PERIOD
        };
        let mut candidates: Vec<usize> = (0..self.replicas.len())
            .filter(|&i| {
                let r = &self.replicas[i];
                !r.s_down
                    && !r.link.disconnected()
                    && since(r.link.last_avail_time) <= 5 * PING_PERIOD
                    && r.priority != 0
                    && r.info_refresh.is_some_and(|t| since(t) <= validity)
                    && r.master_link_down_ms <= max_master_down.as_millis() as i64
            })
            .collect();
        // Stable: equal candidates keep the walking order.
        candidates.sort_by(|&a, &b| {
            let (a, b) = (&self.replicas[a], &self.replicas[b]);
            let run_id =
                |r: &super::instance::Instance| r.run_id.as_ref().map(|s| s.to_ascii_lowercase());
            a.priority
                .cmp(&b.priority)
                .then(b.repl_offset.cmp(&a.repl_offset))
                .then_with(|| match (run_id(a), run_id(b)) {
                    (None, None) => std::cmp::Ordering::Equal,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (Some(x), Some(y)) => x.cmp(&y),
                })
        });
        candidates.first().copied()
    }

    /// `sentinelFailoverReconfNextSlave`: `SLAVEOF <promoted>` to the next
    /// replica, `PARALLEL_SYNCS` at a time.
    fn reconf_next_slave(&mut self, now: Duration) {
        let promoted = self.replicas[self.failover.promoted.expect("promoted")]
            .addr
            .clone();
        let busy = |r: Reconf| matches!(r, Reconf::Sent(_) | Reconf::InProgress);
        let mut in_progress = self.replicas.iter().filter(|r| busy(r.reconf)).count();
        let mut i = 0;
        while in_progress < PARALLEL_SYNCS && i < self.replicas.len() {
            let w = Which::Replica(i);
            i += 1;
            let r = &mut self.replicas[i - 1];
            if r.promoted || r.reconf == Reconf::Done {
                continue;
            }
            if let Reconf::Sent(at) = r.reconf {
                if now.saturating_sub(at) > SLAVE_RECONF_TIMEOUT {
                    r.reconf = Reconf::Done;
                    self.instance_event("-slave-reconf-sent-timeout", w, String::new());
                    // Redis then sends it SLAVEOF again, keeping it done
                    // (both flags): done it stays here.
                    let target = promoted.clone();
                    in_progress += usize::from(self.send_slave_of(w, Some(&target)));
                    continue;
                }
            }
            let r = &self.replicas[i - 1];
            if busy(r.reconf) || r.link.disconnected() {
                continue;
            }
            if self.send_slave_of(w, Some(&promoted)) {
                self.replicas[i - 1].reconf = Reconf::Sent(now);
                self.instance_event("+slave-reconf-sent", w, String::new());
                in_progress += 1;
            }
        }
    }

    /// `sentinelFailoverDetectEnd`.
    fn detect_end(&mut self, now: Duration) {
        let p = self.failover.promoted.expect("promoted");
        if self.replicas[p].s_down {
            return;
        }
        let waiting = self
            .replicas
            .iter()
            .filter(|r| !r.promoted && r.reconf != Reconf::Done && !r.s_down)
            .count();
        let timeout = now.saturating_sub(self.failover.change_time) > FAILOVER_TIMEOUT;
        if timeout {
            self.event("+failover-end-for-timeout", None, String::new());
        }
        if waiting == 0 || timeout {
            self.enter(State::UpdateConfig, "+failover-end", None, now);
        }
        if !timeout {
            return;
        }
        let promoted = self.replicas[p].addr.clone();
        for i in 0..self.replicas.len() {
            let r = &self.replicas[i];
            let skip = r.promoted || matches!(r.reconf, Reconf::Done | Reconf::Sent(_));
            if skip || r.link.disconnected() {
                continue;
            }
            if self.send_slave_of(Which::Replica(i), Some(&promoted)) {
                self.instance_event("+slave-reconf-sent-be", Which::Replica(i), String::new());
                self.replicas[i].reconf = Reconf::Sent(now);
            }
        }
    }

    /// `sentinelFailoverSwitchToPromotedSlave` and
    /// `sentinelResetMasterAndChangeAddress`: the promoted replica is the
    /// master; the old master and the other replicas are replica entries
    /// anew.
    pub(crate) fn switch_to_promoted(&mut self, now: Duration) {
        let new = self.replicas[self.failover.promoted.expect("promoted")]
            .addr
            .clone();
        let old = self.master.addr.clone();
        self.event("+switch-master", Some(new.clone()), String::new());
        let mut addrs: Vec<String> = self
            .replicas
            .iter()
            .map(|r| r.addr.clone())
            .filter(|a| *a != new)
            .collect();
        if old != new {
            addrs.push(old);
        }
        let m = &mut self.master;
        m.link.close();
        m.link.act_ping_time = Some(now);
        m.link.last_ping_time = None;
        m.link.last_avail_time = now;
        m.link.last_pong_time = now;
        m.role_reported = Role::Master;
        m.role_reported_time = now;
        m.run_id = None;
        m.slave_master = None;
        m.s_down = false;
        m.s_down_since = None;
        m.addr = new;
        self.o_down = false;
        self.o_down_since = None;
        self.failover = Failover::default();
        shuffle(&mut addrs, &mut self.rng);
        self.replicas = Vec::new();
        for a in addrs {
            let r = self.new_instance(&a, Role::Replica, now);
            self.replicas.push(r);
            let w = Which::Replica(self.replicas.len() - 1);
            self.instance_event("+slave", w, String::new());
        }
    }

    /// A replica's `INFO` says it is a master: the promotion seen, or (8 s
    /// after it was first seen so) a replica converted back.
    pub(crate) fn replica_reports_master(&mut self, i: usize, now: Duration) {
        let r = &self.replicas[i];
        if r.promoted && self.failover.state == State::WaitPromotion {
            self.config_epoch = self.failover.epoch;
            let new = Some(r.addr.clone());
            self.event("+promoted-slave", new, String::new());
            self.enter(
                State::ReconfSlaves,
                "+failover-state-reconf-slaves",
                None,
                now,
            );
            return;
        }
        let ready = !r.promoted
            && self.master_looks_sane(now)
            && r.no_down_for(CONVERT_WAIT, None, now)
            && now.saturating_sub(r.role_reported_time) > CONVERT_WAIT;
        let master = self.master.addr.clone();
        if ready && self.send_slave_of(Which::Replica(i), Some(&master)) {
            self.instance_event("+convert-to-slave", Which::Replica(i), String::new());
        }
    }

    /// A replica replicating another address than the master's is
    /// re-pointed, once the master looks sane for the failover timeout.
    pub(crate) fn fix_replica_config(&mut self, i: usize, now: Duration) {
        let r = &self.replicas[i];
        if r.replicates(&self.master.addr) {
            return;
        }
        let ready = self.master_looks_sane(now)
            && r.no_down_for(FAILOVER_TIMEOUT, None, now)
            && now.saturating_sub(r.slave_conf_change_time) > FAILOVER_TIMEOUT;
        let master = self.master.addr.clone();
        if ready && self.send_slave_of(Which::Replica(i), Some(&master)) {
            self.instance_event("+fix-slave-config", Which::Replica(i), String::new());
        }
    }

    /// A replica sent `SLAVEOF <promoted>` moves on as its `INFO` shows.
    pub(crate) fn reconf_progress(&mut self, i: usize) {
        let Some(p) = self.failover.promoted else {
            return;
        };
        let promoted = self.replicas[p].addr.clone();
        let w = Which::Replica(i);
        let r = &mut self.replicas[i];
        if matches!(r.reconf, Reconf::Sent(_)) && r.replicates(&promoted) {
            r.reconf = Reconf::InProgress;
            self.instance_event("+slave-reconf-inprog", w, String::new());
        }
        let r = &mut self.replicas[i];
        if r.reconf == Reconf::InProgress && r.master_link_up {
            r.reconf = Reconf::Done;
            self.instance_event("+slave-reconf-done", w, String::new());
        }
    }
}

//! What validation guarantees of every scenario the parser hands out,
//! asserted where it leaves the parser ([`super::parse_tree`]): the rest of
//! the harness relies on these without checking them again. A bad file is
//! an error before this point; a broken invariant here is a bug of the
//! parser, a panic.

use super::types::*;
use std::collections::BTreeSet;

impl Scenario {
    /// Asserts what validation guarantees (the limits of the module's
    /// documentation): a scenario that breaks one was built by a bug.
    pub(crate) fn assert_valid(&self) {
        assert!(
            !self.duration.is_zero(),
            "scenario {}: a zero duration passed validation",
            self.name
        );
        assert!(
            self.tick >= MIN_TICK && self.tick <= self.network.latency.lo,
            "scenario {}: tick {:?} outside [{MIN_TICK:?}, {:?}] (the network's lowest latency)",
            self.name,
            self.tick,
            self.network.latency.lo
        );
        assert!(
            (1..=MAX_NODES).contains(&self.cluster.nodes),
            "scenario {}: {} nodes, not 1..={MAX_NODES}",
            self.name,
            self.cluster.nodes
        );
        assert!(
            (1..=MAX_CLIENTS).contains(&self.clients.len()),
            "scenario {}: {} clients, not 1..={MAX_CLIENTS}",
            self.name,
            self.clients.len()
        );
        for (i, c) in self.clients.iter().enumerate() {
            self.assert_client(i, c);
        }
        let drift = self.clocks.drift;
        assert!(
            (0.0..=1.0 - MIN_CLOCK_RATE).contains(&drift),
            "scenario {}: clock drift {drift} outside [0, {}]",
            self.name,
            1.0 - MIN_CLOCK_RATE
        );
        assert_signed(&self.clocks.offset, "clocks.offset");
        let hosts: BTreeSet<String> = self.host_names().into_iter().collect();
        for (host, clock) in &self.hosts {
            assert!(
                hosts.contains(host),
                "scenario {}: a clock for {host:?}, which is no host of it",
                self.name
            );
            if let Some(rate) = clock.clock_rate {
                assert_rate(rate, host);
            }
            if let Some(offset) = &clock.clock_offset {
                assert_signed(offset, host);
            }
        }
        for (i, f) in self.faults.iter().enumerate() {
            self.assert_fault(i, f, &hosts);
        }
        if let Some(n) = &self.nemesis {
            self.assert_nemesis(n);
        }
        if let Some(sweep) = &self.sweep {
            assert!(
                !sweep.seeds.is_empty(),
                "scenario {}: a sweep of no seeds ({:?})",
                self.name,
                sweep.seeds
            );
            assert!(
                sweep.vary.iter().all(|(_, values)| !values.is_empty()),
                "scenario {}: a varied key without values",
                self.name
            );
        }
    }

    /// Client `i` (`c{i+1}`): positive timings, counts in range, a
    /// re-entry only with the reentrant lock.
    fn assert_client(&self, i: usize, c: &ClientSpec) {
        assert_eq!(
            c.name,
            format!("c{}", i + 1),
            "scenario {}: client {i} misnamed",
            self.name
        );
        assert!(
            !c.ttl.is_zero() && !c.request_timeout.is_zero() && !c.reconnect_backoff.is_zero(),
            "scenario {}: {} has a zero ttl {:?}, request_timeout {:?} or reconnect_backoff {:?}",
            self.name,
            c.name,
            c.ttl,
            c.request_timeout,
            c.reconnect_backoff
        );
        assert!(
            c.ttl <= self.max_ttl,
            "scenario {}: {}'s ttl {:?} above the largest ttl {:?}",
            self.name,
            c.name,
            c.ttl,
            self.max_ttl
        );
        assert!(
            (1..=1_000_000).contains(&c.retry_count) && c.writes <= 1_000_000,
            "scenario {}: {} has retry_count {} or writes {} out of range",
            self.name,
            c.name,
            c.retry_count,
            c.writes
        );
        assert!(
            c.drift_factor.is_finite() && c.drift_factor >= 0.0,
            "scenario {}: {}'s drift_factor {} is not a non-negative number",
            self.name,
            c.name,
            c.drift_factor
        );
        assert!(
            c.reentry <= MAX_REENTRY && (c.reentry == 0 || c.lock == LockKind::Reentrant),
            "scenario {}: {} re-enters {} times with the {} lock",
            self.name,
            c.name,
            c.reentry,
            c.lock.as_str()
        );
        assert!(
            !c.resource.is_empty(),
            "scenario {}: {} locks an empty resource name",
            self.name,
            c.name
        );
        if let Hold::For(r) = &c.hold {
            assert_range(r, "clients.hold");
        }
        assert_range(&c.think, "clients.think");
        assert_range(&c.start, "clients.start");
    }

    /// Fault `i`: its hosts exist, `"master"` only with the single
    /// topology, an untriggered one within the duration, a partition of
    /// disjoint non-empty sides, a slowed link of two hosts no faster than
    /// the tick.
    fn assert_fault(&self, i: usize, f: &Fault, hosts: &BTreeSet<String>) {
        let single = self.cluster.topology == Topology::Single;
        assert!(
            f.after != Trigger::Start || f.at <= self.duration,
            "scenario {}: faults[{i}] at {:?} is past the duration {:?}",
            self.name,
            f.at,
            self.duration
        );
        match &f.after {
            Trigger::Start => {}
            Trigger::Acquired(h)
            | Trigger::Released(h)
            | Trigger::Lost(h)
            | Trigger::Event { host: h, .. } => assert!(
                self.clients.iter().any(|c| c.name == *h),
                "scenario {}: faults[{i}] follows {h:?}, which is no client",
                self.name
            ),
        }
        let target = |t: &Target| match t {
            Target::Master => assert!(
                single,
                "scenario {}: faults[{i}] targets the master of a redlock cluster",
                self.name
            ),
            Target::Host(h) => assert!(
                hosts.contains(h),
                "scenario {}: faults[{i}] targets {h:?}, which is no host",
                self.name
            ),
        };
        match &f.action {
            FaultAction::Crash { host, .. }
            | FaultAction::Restart { host }
            | FaultAction::Isolate { host, .. }
            | FaultAction::Pause { host, .. }
            | FaultAction::ClockJump { host, .. } => target(host),
            FaultAction::ClockRate { host, rate } => {
                target(host);
                assert_rate(*rate, &format!("faults[{i}]"));
            }
            FaultAction::Partition { sides, oneway, .. } => {
                let listed: Vec<&String> = sides.iter().flatten().collect();
                let distinct: BTreeSet<&String> = listed.iter().copied().collect();
                assert!(
                    sides.len() >= 2
                        && (!oneway || sides.len() == 2)
                        && sides.iter().all(|s| !s.is_empty())
                        && distinct.len() == listed.len()
                        && distinct.iter().all(|h| hosts.contains(*h)),
                    "scenario {}: faults[{i}] partitions {sides:?} (oneway {oneway})",
                    self.name
                );
            }
            FaultAction::Latency {
                between, latency, ..
            } => {
                assert!(
                    between.0 != between.1
                        && hosts.contains(&between.0)
                        && hosts.contains(&between.1),
                    "scenario {}: faults[{i}] slows the link {between:?}",
                    self.name
                );
                assert_range(latency, &format!("faults[{i}].latency"));
                assert!(
                    latency.lo >= self.tick,
                    "scenario {}: faults[{i}]'s latency {:?} below the tick {:?}",
                    self.name,
                    latency.lo,
                    self.tick
                );
            }
            FaultAction::Heal => {}
        }
    }

    /// The nemesis: every mean interval more than zero, `"master"` only
    /// with the single topology, its ranges forwards.
    fn assert_nemesis(&self, n: &Nemesis) {
        let every = [
            n.crash_every,
            n.kill_every,
            n.partition_every,
            n.pause_every,
            n.clock_jump_every,
        ];
        assert!(
            every.iter().flatten().all(|d| !d.is_zero()),
            "scenario {}: a nemesis interval of zero in {every:?}",
            self.name
        );
        assert!(
            n.crash_target == CrashTarget::Node || self.cluster.topology == Topology::Single,
            "scenario {}: the nemesis crashes the master of a redlock cluster",
            self.name
        );
        assert_range(&n.partition_for, "nemesis.partition_for");
        assert_range(&n.pause_for, "nemesis.pause_for");
        assert_signed(&n.clock_jump, "nemesis.clock_jump");
    }
}

/// A duration range runs forwards.
fn assert_range(r: &DurRange, what: &str) {
    assert!(
        r.lo <= r.hi,
        "{what}: range {:?}..{:?} backwards",
        r.lo,
        r.hi
    );
}

/// A signed range is of finite numbers and runs forwards.
fn assert_signed(r: &SignedRange, what: &str) {
    assert!(
        r.lo_ms.is_finite() && r.hi_ms.is_finite() && r.lo_ms <= r.hi_ms,
        "{what}: range {}ms..{}ms not finite and forwards",
        r.lo_ms,
        r.hi_ms
    );
}

/// A clock rate within the limits.
fn assert_rate(rate: f64, what: &str) {
    assert!(
        (MIN_CLOCK_RATE..=MAX_CLOCK_RATE).contains(&rate),
        "{what}: clock rate {rate} outside [{MIN_CLOCK_RATE}, {MAX_CLOCK_RATE}]"
    );
}

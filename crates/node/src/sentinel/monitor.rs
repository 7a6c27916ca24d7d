//! The sentinel's monitor: Redis Sentinel 7.0's timer, links and instance
//! handling (`sentinelTimer`, `sentinelHandleRedisInstance`), for one
//! master of quorum 1 watched by this sentinel alone.
//!
//! Every tick draws the length of the next one, `1000 / (10 + r % 10)` ms
//! (52 to 100 ms), as Sentinel sets `server.hz` at the end of each
//! `sentinelTimer`; `r` comes from a ChaCha generator seeded by the run,
//! which also draws the failover's start desync and the order in which the
//! replicas are walked (Redis's dict order, random per process). Each tick
//! handles the master, then each replica: reconnect a disconnected link
//! (at most once a second, with a `PING` at once), send `INFO` (every
//! 10 s; every second to a replica while its master is objectively down or
//! failing over, or while its own master link is down) and `PING` (every
//! `min(down-after, 1 s)`), and check subjective down: the oldest
//! unanswered `PING` (or, on a disconnected link, the last reply that made
//! it available) older than `down-after-milliseconds`. For the master it
//! then checks objective down, starts a failover, and moves the failover
//! one state on ([`super::failover`]). Replies are taken between ticks,
//! in the order they arrive, as hiredis's callbacks are
//! ([`Sentinel::arrive`]).
//!
//! A tick more than 2 s after the previous one (the sentinel's host was
//! paused) enters TILT mode for 30 s, as Redis's does: it keeps its links
//! and asks, but neither calls anything down nor acts on what it hears.
//!
//! Not modelled: other sentinels (their hellos, votes and the Pub/Sub
//! link), a jump of the sentinel's wall clock (Redis Sentinel times
//! everything on it; the model on its host's monotonic clock, which does
//! not jump), replicas discovered from the master's
//! `INFO` (the sentinel knows every node of the scenario, as the lab's
//! `redis-sentinel` does from its `known-replica` lines), `+reboot`.

use super::instance::{Info, Instance, Role};
use super::link::{Arrival, Deliver, Delivery, Sent, PING_PERIOD};
use super::state::{Failover, State};
use super::SentinelConfig;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_proto::connection::Connector;
use redlock_proto::resp::Frame;
use std::sync::Arc;
use std::time::Duration;

/// `sentinel_info_period`.
pub(crate) const INFO_PERIOD: Duration = Duration::from_secs(10);
/// `sentinel_min_link_reconnect_period`.
const MIN_LINK_RECONNECT_PERIOD: Duration = Duration::from_secs(15);
/// `sentinel_tilt_trigger`: a tick this long after the previous one (the
/// sentinel was paused) puts it in TILT mode.
const TILT_TRIGGER: Duration = Duration::from_secs(2);
/// `sentinel_tilt_period`: how long TILT mode lasts.
const TILT_PERIOD: Duration = Duration::from_secs(30);
/// `SENTINEL_MAX_PENDING_COMMANDS`.
const MAX_PENDING: usize = 100;
/// Redis Sentinel's default `down-after-milliseconds`, for a monitor that
/// never fails over.
pub(crate) const DEFAULT_DOWN_AFTER: Duration = Duration::from_secs(30);

/// Something the sentinel announces, as Redis Sentinel's `sentinelEvent`:
/// `name` about the master (`replica` none) or about one of its replicas,
/// with `extra` after the instance's description. `+promoted-slave` and
/// `+switch-master` name the new master as `replica`; [`BARE`] events
/// are `extra` alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) name: &'static str,
    pub(crate) replica: Option<String>,
    pub(crate) master: String,
    pub(crate) extra: String,
}

/// The events Redis Sentinel words without the instance: `+new-epoch
/// <epoch>`, `+vote-for-leader <run id> <epoch>`, `+tilt #tilt mode
/// entered`, `-tilt #tilt mode exited`.
pub(crate) const BARE: &[&str] = &["+new-epoch", "+vote-for-leader", "+tilt", "-tilt"];

/// Which instance: the master, or the replica at this place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Master,
    Replica(usize),
}

/// The sentinel's state: the master, its replicas, the failover.
pub(crate) struct Sentinel {
    pub(crate) down_after: Duration,
    /// Whether it fails over at all (the scenario has `failover_after`).
    pub(crate) fails_over: bool,
    connector: Arc<dyn Connector>,
    deliver: Deliver,
    pub(crate) rng: ChaCha8Rng,
    next_uid: u64,
    pub(crate) master: Instance,
    /// In the order Sentinel walks them.
    pub(crate) replicas: Vec<Instance>,
    pub(crate) o_down: bool,
    pub(crate) o_down_since: Option<Duration>,
    pub(crate) failover: Failover,
    pub(crate) current_epoch: u64,
    pub(crate) config_epoch: u64,
    /// Its run id (40 hex digits), drawn: it names the vote.
    pub(crate) myid: String,
    /// The last tick's time, and since when it is in TILT mode, if it is.
    previous_tick: Duration,
    tilt_since: Option<Duration>,
    events: Vec<Event>,
}

impl Sentinel {
    /// The sentinel of `cfg` at `now`, its links' deliveries sent to
    /// `deliver`.
    pub(crate) fn new(cfg: &SentinelConfig, deliver: Deliver, now: Duration) -> Sentinel {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let myid = (0..40)
            .map(|_| char::from_digit(rng.random_range(0..16), 16).expect("a hex digit"))
            .collect();
        let mut others: Vec<&String> = cfg.nodes.iter().filter(|n| **n != cfg.master).collect();
        shuffle(&mut others, &mut rng);
        let replicas = others
            .iter()
            .enumerate()
            .map(|(i, a)| Instance::new(i as u64 + 1, a, Role::Replica, now))
            .collect::<Vec<_>>();
        Sentinel {
            down_after: cfg.failover_after.unwrap_or(DEFAULT_DOWN_AFTER),
            fails_over: cfg.failover_after.is_some(),
            connector: cfg.connector.clone(),
            deliver,
            rng,
            next_uid: replicas.len() as u64 + 1,
            master: Instance::new(0, &cfg.master, Role::Master, now),
            replicas,
            o_down: false,
            o_down_since: None,
            failover: Failover::default(),
            current_epoch: 0,
            config_epoch: 0,
            myid,
            previous_tick: now,
            tilt_since: None,
            events: Vec::new(),
        }
    }

    /// The time to the next tick: `1000 / hz` ms, `hz` drawn from 10..=19.
    pub(crate) fn next_tick(&mut self) -> Duration {
        Duration::from_millis(1000 / (10 + self.rng.random_range(0..10u64)))
    }

    /// What happened since the last call, in order.
    pub(crate) fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    pub(crate) fn event(&mut self, name: &'static str, replica: Option<String>, extra: String) {
        let master = self.master.addr.clone();
        self.events.push(Event {
            name,
            replica,
            master,
            extra,
        });
    }

    pub(crate) fn get(&self, w: Which) -> &Instance {
        match w {
            Which::Master => &self.master,
            Which::Replica(i) => &self.replicas[i],
        }
    }

    pub(crate) fn get_mut(&mut self, w: Which) -> &mut Instance {
        match w {
            Which::Master => &mut self.master,
            Which::Replica(i) => &mut self.replicas[i],
        }
    }

    /// The address `SENTINEL get-master-addr-by-name` answers
    /// (`sentinelGetCurrentMasterAddress`): the promoted replica's from
    /// the moment its promotion is seen.
    pub(crate) fn current_master(&self) -> &str {
        match (self.failover.state, self.failover.promoted) {
            (State::ReconfSlaves | State::UpdateConfig, Some(p)) => &self.replicas[p].addr,
            _ => &self.master.addr,
        }
    }

    /// One tick (`sentinelHandleDictOfRedisInstances`): the master, then
    /// each replica, then the switch to the promoted replica if the
    /// failover has ended.
    pub(crate) fn tick(&mut self, now: Duration) {
        self.check_tilt(now);
        self.handle(Which::Master, now);
        for i in 0..self.replicas.len() {
            self.handle(Which::Replica(i), now);
        }
        if self.failover.state == State::UpdateConfig {
            self.switch_to_promoted(now);
        }
    }

    /// `sentinelCheckTiltCondition`: a tick more than [`TILT_TRIGGER`]
    /// after the previous one (the sentinel's host was paused) enters TILT
    /// mode, in which the sentinel watches but does not act. (Redis
    /// Sentinel reads the wall clock, so a jump of it does the same; the
    /// model's clock is its host's monotonic one, which does not jump.)
    fn check_tilt(&mut self, now: Duration) {
        if now.saturating_sub(self.previous_tick) > TILT_TRIGGER {
            self.tilt_since = Some(now);
            self.event("+tilt", None, "#tilt mode entered".into());
        }
        self.previous_tick = now;
    }

    /// In TILT mode (and leaves it after [`TILT_PERIOD`]).
    fn tilted(&mut self, now: Duration) -> bool {
        let Some(since) = self.tilt_since else {
            return false;
        };
        if now.saturating_sub(since) < TILT_PERIOD {
            return true;
        }
        self.tilt_since = None;
        self.event("-tilt", None, "#tilt mode exited".into());
        false
    }

    /// `sentinelHandleRedisInstance`.
    fn handle(&mut self, w: Which, now: Duration) {
        let (connector, deliver) = (self.connector.clone(), self.deliver.clone());
        let inst = self.get_mut(w);
        let (uid, addr) = (inst.uid, inst.addr.clone());
        inst.link.reconnect(now, (uid, &addr), &connector, &deliver);
        self.send_periodic(w, now);
        if self.tilted(now) {
            return;
        }
        self.check_subjectively_down(w, now);
        if w == Which::Master {
            self.check_objectively_down(now);
            self.start_failover_if_needed(now);
            self.failover_state_machine(now);
        }
    }

    /// `sentinelSendPeriodicCommands`: `INFO` and `PING` when due.
    fn send_periodic(&mut self, w: Which, now: Duration) {
        let failing = self.o_down || self.failover.in_progress();
        let (down_after, inst) = (self.down_after, self.get_mut(w));
        if inst.link.disconnected() || inst.link.pending >= MAX_PENDING {
            return;
        }
        let fast = matches!(w, Which::Replica(_)) && (failing || inst.master_link_down_ms != 0);
        let info_period = if fast { PING_PERIOD } else { INFO_PERIOD };
        if inst
            .info_refresh
            .is_none_or(|t| now.saturating_sub(t) > info_period)
        {
            inst.link.send(Sent::Info, Frame::command(["INFO"]));
        }
        let ping_period = down_after.min(PING_PERIOD);
        let link = &mut inst.link;
        if now.saturating_sub(link.last_pong_time) > ping_period
            && link
                .last_ping_time
                .is_none_or(|t| now.saturating_sub(t) > ping_period / 2)
        {
            link.send_ping(now);
        }
    }

    /// `sentinelCheckSubjectivelyDown`.
    fn check_subjectively_down(&mut self, w: Which, now: Duration) {
        let down_after = self.down_after;
        let inst = self.get_mut(w);
        let link = &mut inst.link;
        let since = |t: Duration| now.saturating_sub(t);
        let elapsed = match (link.act_ping_time, link.disconnected()) {
            (Some(t), _) => since(t),
            (None, true) => since(link.last_avail_time),
            (None, false) => Duration::ZERO,
        };
        if !link.disconnected()
            && since(link.cc_conn_time) > MIN_LINK_RECONNECT_PERIOD
            && link
                .act_ping_time
                .is_some_and(|t| since(t) > down_after / 2)
            && since(link.last_pong_time) > down_after / 2
        {
            link.close();
        }
        let claims_replica = w == Which::Master
            && inst.role_reported == Role::Replica
            && since(inst.role_reported_time) > down_after + 2 * INFO_PERIOD;
        let down = elapsed > down_after || claims_replica;
        if down && !inst.s_down {
            inst.s_down = true;
            inst.s_down_since = Some(now);
            self.instance_event("+sdown", w, String::new());
        } else if !down && inst.s_down {
            inst.s_down = false;
            self.instance_event("-sdown", w, String::new());
        }
    }

    /// An event about instance `w`.
    pub(crate) fn instance_event(&mut self, name: &'static str, w: Which, extra: String) {
        let replica = match w {
            Which::Master => None,
            Which::Replica(i) => Some(self.replicas[i].addr.clone()),
        };
        self.event(name, replica, extra);
    }

    /// Takes in what a link's connection read (between ticks).
    pub(crate) fn arrive(&mut self, a: Arrival, now: Duration) {
        let Some(w) = self.find(a.instance) else {
            return;
        };
        let link = &mut self.get_mut(w).link;
        if !link.is_live(a.generation) {
            return;
        }
        match a.delivery {
            Delivery::Closed => link.close(),
            Delivery::Reply(sent, reply) => {
                link.replied();
                match (sent, reply) {
                    (Sent::Ping, reply) => link.ping_reply(&reply, now),
                    (Sent::Info, Frame::Bulk(text) | Frame::Verbatim(text)) => {
                        self.refresh_info(w, &String::from_utf8_lossy(&text), now);
                    }
                    _ => {}
                }
            }
        }
    }

    fn find(&self, uid: u64) -> Option<Which> {
        if self.master.uid == uid {
            return Some(Which::Master);
        }
        self.replicas
            .iter()
            .position(|r| r.uid == uid)
            .map(Which::Replica)
    }

    /// `sentinelRefreshInstanceInfo`: what an `INFO` reply changes.
    fn refresh_info(&mut self, w: Which, text: &str, now: Duration) {
        let info = Info::parse(text);
        if let Some(role) = self.get_mut(w).refresh(&info, now) {
            // `+role-change` if the new role is the one configured,
            // `-role-change` if not.
            let configured = match w {
                Which::Master => Role::Master,
                Which::Replica(_) => Role::Replica,
            };
            let name = if role == configured {
                "+role-change"
            } else {
                "-role-change"
            };
            let word = if role == Role::Master {
                "master"
            } else {
                "slave"
            };
            self.instance_event(name, w, format!(" new reported role is {word}"));
        }
        if self.tilt_since.is_some() {
            return;
        }
        let Which::Replica(i) = w else {
            return;
        };
        match info.role {
            Some(Role::Master) => self.replica_reports_master(i, now),
            Some(Role::Replica) => {
                self.fix_replica_config(i, now);
                self.reconf_progress(i);
            }
            None => {}
        }
    }

    /// `sentinelMasterLooksSane`.
    pub(crate) fn master_looks_sane(&self, now: Duration) -> bool {
        let m = &self.master;
        m.role_reported == Role::Master
            && !m.s_down
            && !self.o_down
            && m.info_refresh
                .is_some_and(|t| now.saturating_sub(t) < 2 * INFO_PERIOD)
    }

    /// `sentinelSendSlaveOf`: the transaction Sentinel sends (`SLAVEOF`,
    /// `CONFIG REWRITE`, `CLIENT KILL` of normal and Pub/Sub clients),
    /// making `w` a replica of `target` or (`None`) a master.
    pub(crate) fn send_slave_of(&mut self, w: Which, target: Option<&str>) -> bool {
        let (host, port) = target.map_or(("NO", "ONE"), super::split_addr);
        let link = &mut self.get_mut(w).link;
        let commands = [
            Frame::command(["MULTI"]),
            Frame::command(["SLAVEOF", host, port]),
            Frame::command(["CONFIG", "REWRITE"]),
            Frame::command(["CLIENT", "KILL", "TYPE", "normal"]),
            Frame::command(["CLIENT", "KILL", "TYPE", "pubsub"]),
            Frame::command(["EXEC"]),
        ];
        commands.into_iter().all(|c| link.send(Sent::Discard, c))
    }

    /// A new instance of `addr` with a fresh number; it has no
    /// connection yet (its link's first reconnect waits for the tick).
    pub(crate) fn new_instance(&mut self, addr: &str, role: Role, now: Duration) -> Instance {
        self.next_uid += 1;
        Instance::new(self.next_uid, addr, role, now)
    }
}

/// Fisher-Yates with the sentinel's generator: Redis's dict order.
pub(crate) fn shuffle<T>(items: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlock_proto::connection::ConnectFuture;

    /// Nothing answers: every connect is refused.
    struct Refused;

    impl Connector for Refused {
        fn connect<'a>(&'a self, _: &'a str) -> ConnectFuture<'a> {
            Box::pin(async { Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) })
        }
    }

    fn sentinel(seed: u64) -> Sentinel {
        let cfg = SentinelConfig {
            nodes: vec!["n1:6379".into(), "n2:6379".into(), "n3:6379".into()],
            master: "n1:6379".into(),
            failover_after: Some(Duration::from_secs(1)),
            clock: Arc::new(redlock_proto::clock::SystemClock::new()),
            connector: Arc::new(Refused),
            on_failover: Arc::new(|_: &str, _: &str| {}),
            on_event: None,
            seed,
        };
        let (deliver, _) = tokio::sync::mpsc::unbounded_channel();
        Sentinel::new(&cfg, deliver, Duration::ZERO)
    }

    fn names(s: &mut Sentinel) -> Vec<&'static str> {
        s.take_events().into_iter().map(|e| e.name).collect()
    }

    #[test]
    fn ticks_last_52_to_100_ms_and_the_seed_draws_them() {
        let (mut a, mut b) = (sentinel(7), sentinel(7));
        let ticks: Vec<Duration> = (0..200).map(|_| a.next_tick()).collect();
        assert!(ticks
            .iter()
            .all(|t| (52..=100).contains(&(t.as_millis() as u64))));
        assert!(
            ticks.iter().any(|t| t.as_millis() == 52) && ticks.iter().any(|t| t.as_millis() == 100)
        );
        assert_eq!(ticks, (0..200).map(|_| b.next_tick()).collect::<Vec<_>>());
        let orders: std::collections::BTreeSet<String> = (0..20)
            .map(|seed| sentinel(seed).replicas[0].addr.clone())
            .collect();
        assert_eq!(orders.len(), 2, "the seed draws the order of the replicas");
    }

    /// A master that never answered is down once its link's pending ping is
    /// older than down-after (1 s): not at 1 s, at the first tick after.
    /// A tick 2 s after the previous one enters TILT mode: nothing is
    /// called down for 30 s.
    #[tokio::test]
    async fn down_after_down_after_and_not_in_tilt() {
        let ms = Duration::from_millis;
        let mut s = sentinel(1);
        s.tick(ms(1000));
        assert!(!names(&mut s).contains(&"+sdown"));
        s.tick(ms(1070));
        let first = names(&mut s);
        assert_eq!(&first[..2], ["+sdown", "+odown"], "{first:?}");
        assert!(first.contains(&"+try-failover") && first.contains(&"+elected-leader"));
        let mut t = sentinel(1);
        t.tick(ms(10));
        t.tick(ms(3000));
        assert_eq!(names(&mut t), ["+tilt"]);
        for at in (3100..33_000).step_by(100) {
            t.tick(ms(at));
        }
        assert!(names(&mut t).is_empty(), "no +sdown in TILT mode");
        t.tick(ms(33_050));
        let after = names(&mut t);
        assert_eq!(&after[..2], ["-tilt", "+sdown"], "{after:?}");
    }
}

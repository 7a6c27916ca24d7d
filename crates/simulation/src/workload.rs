//! The workload: what each simulated client does, with the real client code.
//!
//! A client loops as the scenario format says: wait `think`, call `lock`,
//! and when it has the lock do `writes` writes to the store spread evenly
//! over `hold`, then release. The first write goes out at once, on the
//! validity the acquisition just computed; before each later write the client
//! checks its validity on its own monotonic clock and stops if it is over.
//! A pause can strike between that check and the write. The client keeps
//! one connection to the store, opened when it starts ([`StoreLink`]). With
//! the single
//! topology the built-in client asks the sentinel which node is master, at
//! the start and again after a failed lock call.
//!
//! The same loop drives the built-in client or a lock of the user's own
//! ([`super::own`]): [`LockCode`] says which, [`LockUnderTest`] runs it.

use super::context::Context;
use super::own::{self, Lease, LockEnv};
use super::pause::PausingConnector;
use super::sockets::Connector;
use super::store_link::{Outcome, StoreLink};
use rand::SeedableRng;
use rand_chacha::{ChaCha20Rng, ChaCha8Rng};
use redlock_client::{Config, Lock, RedisConn, Redlock, Status, Watchdog};
use redlock_engine::setup::{fnv, rng_for, NODE_PORT, WRITE_TIMEOUT};
use redlock_history::EventKind;
use redlock_proto::clock::{sim_now, Clock, SimClock};
use redlock_proto::connection::NodeConn;
use redlock_proto::resp::Frame;
use redlock_scenario::{ClientSpec, Hold, Topology};
use std::sync::Arc;
use std::time::Duration;

/// Port of the protected store.
pub(crate) const STORE_ADDR: &str = "store:7000";
/// Port of the sentinel.
pub(crate) const SENTINEL_ADDR: &str = "sentinel:26379";

/// The lock code the clients run.
#[derive(Clone, Default)]
pub enum LockCode {
    /// The project's client (`redlock_client`).
    #[default]
    BuiltIn,
    /// A lock of the user's own, built per client host.
    Own(own::Factory),
}

/// Everything one client needs.
pub(crate) struct ClientParams {
    pub(crate) spec: ClientSpec,
    /// Node addresses for the quorum lock (`None`: ask the sentinel).
    pub(crate) nodes: Option<Vec<String>>,
    /// Every node's address, n1..nN (a lock of one's own gets them all).
    pub(crate) all_nodes: Vec<String>,
    pub seed: u64,
    pub(crate) code: LockCode,
}

/// The lock a client's loop runs.
enum LockUnderTest {
    /// The built-in client, built again each time the master moves (`None`
    /// until the sentinel has named one).
    BuiltIn(Option<Arc<Redlock>>),
    /// A lock of the user's own.
    Own(Box<dyn own::DynLock>),
}

/// A lock the client holds, whichever code took it.
enum Held {
    BuiltIn(Lock),
    /// The lease, and the monotonic time at which its validity ends.
    Own(Lease, Duration),
}

impl Held {
    fn token(&self) -> &str {
        match self {
            Held::BuiltIn(l) => &l.token,
            Held::Own(l, _) => &l.token,
        }
    }

    fn validity(&self) -> Duration {
        match self {
            Held::BuiltIn(l) => l.validity,
            Held::Own(l, _) => l.validity,
        }
    }

    /// Monotonic time after which the lock must be taken as lost.
    fn valid_until(&self) -> Duration {
        match self {
            Held::BuiltIn(l) => l.valid_until,
            Held::Own(_, until) => *until,
        }
    }

    fn nodes(&self) -> usize {
        match self {
            Held::BuiltIn(l) => l.nodes_locked,
            Held::Own(l, _) => l.nodes,
        }
    }
}

impl LockUnderTest {
    /// Takes the lock; `None` when the built-in client knows no master yet.
    async fn acquire(
        &mut self,
        clock: &SimClock,
        resource: &str,
        ttl: Duration,
    ) -> Option<Result<Held, String>> {
        match self {
            LockUnderTest::BuiltIn(None) => None,
            LockUnderTest::BuiltIn(Some(r)) => Some(
                r.lock(resource, ttl)
                    .await
                    .map(Held::BuiltIn)
                    .map_err(|e| e.to_string()),
            ),
            LockUnderTest::Own(lock) => Some(match lock.acquire(resource, ttl).await {
                Ok(lease) => {
                    let until = clock.now().saturating_add(lease.validity);
                    Ok(Held::Own(lease, until))
                }
                Err(e) => Err(e.to_string()),
            }),
        }
    }

    /// Releases `held`; the nodes on which the key was deleted.
    async fn release(&mut self, held: &Held) -> usize {
        match (self, held) {
            (LockUnderTest::BuiltIn(Some(r)), Held::BuiltIn(lock)) => r.unlock(lock).await,
            (LockUnderTest::Own(lock), Held::Own(lease, _)) => lock.release(lease).await,
            _ => 0,
        }
    }

    /// The built-in client's watchdog for `held` (`renew = true`).
    fn watchdog(&self, held: &Held) -> Option<Watchdog> {
        match (self, held) {
            (LockUnderTest::BuiltIn(Some(r)), Held::BuiltIn(lock)) => {
                Some(r.watchdog(lock.clone()))
            }
            _ => None,
        }
    }
}

struct Client {
    ctx: Arc<Context>,
    name: String,
    spec: ClientSpec,
    clock: SimClock,
    seed: u64,
    rng: ChaCha8Rng,
    store: StoreLink,
    /// Redlock clients built so far (a new one each time the master moves).
    generation: u64,
}

/// The client host's program.
pub(crate) async fn client_main(ctx: Arc<Context>, p: ClientParams) -> turmoil::Result {
    let name = p.spec.name.clone();
    let clock = ctx.clock(&name);
    let mut c = Client {
        store: StoreLink::open(STORE_ADDR, connector(&clock)),
        clock,
        rng: rng_for(p.seed, &name, "workload"),
        ctx,
        name,
        spec: p.spec,
        seed: p.seed,
        generation: 0,
    };
    let sentinel = NodeConn::new(SENTINEL_ADDR);
    // Single topology, built-in client: the master in use, and whether to
    // ask the sentinel (at the start, and again after a failed lock call).
    // A lock of one's own asks the sentinel itself, if it wants to.
    let single = p.nodes.is_none() && matches!(p.code, LockCode::BuiltIn);
    let mut master: Option<String> = None;
    let mut ask = single;
    let mut under_test = match &p.code {
        LockCode::BuiltIn => LockUnderTest::BuiltIn(p.nodes.map(|n| c.redlock(n))),
        LockCode::Own(build) => {
            LockUnderTest::Own(build(c.own_env(&p.all_nodes, single_topology(&p.nodes))))
        }
    };
    let start = c.spec.start.draw(&mut c.rng);
    c.clock.sleep(start).await;
    let mut call = 0;
    let mut acq = 0;
    loop {
        c.ctx.pause_point(&c.name).await;
        if sim_now() >= c.ctx.end {
            return Ok(());
        }
        if ask {
            if let Some(m) = c.ask_sentinel(&sentinel).await {
                if master.as_ref() != Some(&m) {
                    under_test =
                        LockUnderTest::BuiltIn(Some(c.redlock(vec![format!("{m}:{NODE_PORT}")])));
                    master = Some(m);
                }
                ask = false;
            }
            // The sentinel may have taken past the end to answer (a cut
            // one, until the request timed out): no lock call starts then.
            if sim_now() >= c.ctx.end {
                return Ok(());
            }
        }
        if !matches!(under_test, LockUnderTest::BuiltIn(None)) {
            assert!(
                sim_now() < c.ctx.end,
                "{}: a lock call at {:?}, after the run's end {:?}",
                c.name,
                sim_now(),
                c.ctx.end
            );
            call += 1;
            c.ctx.record(
                &c.name,
                EventKind::LockCall {
                    call,
                    resource: c.spec.resource.clone(),
                },
            );
            match under_test
                .acquire(&c.clock, &c.spec.resource, c.spec.ttl)
                .await
            {
                Some(Ok(held)) => {
                    acq += 1;
                    c.hold(&mut under_test, held, acq).await;
                }
                Some(Err(e)) => {
                    c.ctx.record(
                        &c.name,
                        EventKind::LockFailed {
                            call,
                            reason: short(&e),
                        },
                    );
                    ask = single;
                }
                None => {}
            }
        }
        let think = c.spec.think.draw(&mut c.rng);
        c.clock.sleep(think.max(Duration::from_millis(1))).await;
    }
}

/// The network as the client of `clock` sees it (see `Client::connector`).
fn connector(clock: &SimClock) -> PausingConnector {
    PausingConnector {
        clock: clock.clone(),
        net: Connector,
    }
}

/// Whether the nodes are one master with replicas (no quorum addresses).
fn single_topology(nodes: &Option<Vec<String>>) -> Topology {
    if nodes.is_some() {
        Topology::Redlock
    } else {
        Topology::Single
    }
}

impl Client {
    /// The network as this client sees it: nothing moves on its sockets
    /// while it is paused.
    fn connector(&self) -> PausingConnector {
        connector(&self.clock)
    }

    fn redlock(&mut self, nodes: Vec<String>) -> Arc<Redlock> {
        self.generation += 1;
        let config = Config {
            retry_count: self.spec.retry_count,
            retry_delay: self.spec.retry_delay,
            request_timeout: self.spec.request_timeout,
            drift_factor: self.spec.drift_factor,
            variant: self.spec.variant,
            lock: self.spec.lock,
            reconnect_backoff: self.spec.reconnect_backoff,
        };
        let token_seed = self.seed ^ fnv(&self.name) ^ fnv("tokens").wrapping_add(self.generation);
        Arc::new(Redlock::new(
            nodes,
            config,
            Arc::new(self.clock.clone()),
            Arc::new(self.connector()),
            ChaCha20Rng::seed_from_u64(token_seed),
        ))
    }

    /// What a lock of the user's own is built from: connections to every
    /// node (and the sentinel) over this client's network, its clock, and a
    /// generator of its own.
    fn own_env(&self, nodes: &[String], topology: Topology) -> LockEnv {
        let clock: Arc<dyn Clock> = Arc::new(self.clock.clone());
        let connector: Arc<dyn redlock_client::Connector> = Arc::new(self.connector());
        let conn =
            |addr: &str, timeout| RedisConn::new(addr, connector.clone(), clock.clone(), timeout);
        let timeout = self.spec.request_timeout;
        LockEnv {
            client: self.name.clone(),
            spec: self.spec.clone(),
            topology,
            nodes: nodes.iter().map(|a| conn(a, timeout)).collect(),
            sentinel: (topology == Topology::Single).then(|| conn(SENTINEL_ADDR, timeout * 4)),
            clock: clock.clone(),
            rng: ChaCha20Rng::seed_from_u64(self.seed ^ fnv(&self.name) ^ fnv("own-lock")),
        }
    }

    async fn ask_sentinel(&self, sentinel: &NodeConn) -> Option<String> {
        let cmd = Frame::command(["SENTINEL", "get-master-addr-by-name", "mymaster"]);
        match sentinel
            .request(
                &self.connector(),
                &self.clock,
                &cmd,
                self.spec.request_timeout * 4,
            )
            .await
        {
            Ok(Frame::Array(items)) => match items.first() {
                Some(Frame::Bulk(host)) => Some(String::from_utf8_lossy(host).into_owned()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Global time at which this client's monotonic clock reads `mono`.
    fn global_of(&self, mono: Duration) -> Duration {
        let rest = mono.saturating_sub(self.clock.now());
        let g = self
            .clock
            .model()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .global_for(rest);
        sim_now() + g
    }

    async fn hold(&mut self, under_test: &mut LockUnderTest, held: Held, acq: u64) {
        let fence = self.spec.fencing.then(|| self.ctx.next_fence());
        self.record_acquired(&held, acq, fence);
        let dog = if self.spec.renew {
            under_test.watchdog(&held)
        } else {
            None
        };
        let hold = self.hold_length(&held);
        // The writes are due at fixed offsets from the acquisition, on the
        // client's clock: a slow acknowledgement delays the next write only
        // if it comes after that write's time.
        let start = self.clock.now();
        let watcher = dog.as_ref().map(|d| self.watch(d, acq));
        let writes = self.spec.writes;
        let gap = if writes > 1 {
            hold / (writes - 1)
        } else {
            hold
        };
        // Re-entries (lock = "reentrant"): after the first write, or at once
        // with no writes; released in reverse order before the release.
        let mut nested: Vec<Lock> = Vec::new();
        let mut holding = writes > 0
            || self
                .reenter(under_test, &held, &dog, acq, &mut nested)
                .await;
        for seq in 1..=writes {
            if seq > 1 {
                let due = start + gap * (seq - 1);
                assert!(
                    due <= start + hold,
                    "sim: write {seq} of {writes} due at {due:?}, past the hold's end {:?}",
                    start + hold
                );
                self.clock.sleep(due.saturating_sub(self.clock.now())).await;
                self.ctx.pause_point(&self.name).await;
                if !self.still_valid(&held, &dog) {
                    self.ctx
                        .record(&self.name, EventKind::ValidityExpired { acq });
                    break;
                }
            }
            self.write(&held, &dog, acq, seq, fence).await;
            if seq == 1
                && !self
                    .reenter(under_test, &held, &dog, acq, &mut nested)
                    .await
            {
                holding = false;
                break;
            }
        }
        if holding {
            match (self.spec.hold, &dog) {
                // With the watchdog, a worst-case hold lasts until an
                // extension fails (or the run is over).
                (Hold::Validity, Some(d)) => self.until_lost(d).await,
                _ if writes <= 1 => {
                    let rest = (start + hold).saturating_sub(self.clock.now());
                    self.clock.sleep(rest).await;
                }
                _ => {}
            }
        }
        self.leave(under_test, nested, acq).await;
        self.ctx.pause_point(&self.name).await;
        self.ctx.record(&self.name, EventKind::ReleaseStart { acq });
        let nodes = match dog {
            Some(d) => d.release().await,
            None => under_test.release(&held).await,
        };
        if let Some(w) = watcher {
            w.abort();
        }
        self.ctx
            .record(&self.name, EventKind::Released { acq, nodes });
    }

    /// Records the `acquired` event of `held`.
    fn record_acquired(&self, held: &Held, acq: u64, fence: Option<u64>) {
        self.ctx.record(
            &self.name,
            EventKind::Acquired {
                acq,
                resource: self.spec.resource.clone(),
                token: held.token().to_string(),
                validity: held.validity(),
                valid_until: self.global_of(held.valid_until()),
                nodes: held.nodes(),
                fence,
            },
        );
    }

    /// How long to hold `held`, on the client's clock: drawn from `hold`,
    /// or the rest of its validity.
    fn hold_length(&mut self, held: &Held) -> Duration {
        match self.spec.hold {
            Hold::For(range) => range.draw(&mut self.rng),
            // The rest of the validity; a validity past the run's end
            // (one no correct client computes) is held to the end.
            Hold::Validity => {
                let rest = held.valid_until().saturating_sub(self.clock.now());
                let to_end = self.ctx.end.saturating_sub(sim_now());
                rest.min(to_end.max(self.spec.ttl))
            }
        }
    }

    /// Is the lock still held, by the client's clock (and its watchdog's
    /// word, with one)?
    fn still_valid(&self, held: &Held, dog: &Option<Watchdog>) -> bool {
        let (valid_until, lost) = match dog {
            Some(d) => {
                let s = d.status();
                (s.lock.valid_until, s.lost.is_some())
            }
            None => (held.valid_until(), false),
        };
        !lost && self.clock.now() < valid_until
    }

    /// Write `seq` of acquisition `acq` to the store; waits for the
    /// acknowledgement while the lock is valid (at least WRITE_TIMEOUT): a
    /// write still in flight when the lock runs out is the hazard the
    /// stale-write check reports. Recorded as sent when it leaves, as
    /// abandoned when its connection never opened in that time.
    async fn write(
        &mut self,
        held: &Held,
        dog: &Option<Watchdog>,
        acq: u64,
        seq: u32,
        fence: Option<u64>,
    ) {
        assert!(
            acq >= 1 && (1..=self.spec.writes).contains(&seq),
            "sim: {}'s write {seq} of acquisition {acq}, of {} writes",
            self.name,
            self.spec.writes
        );
        self.ctx.pause_point(&self.name).await;
        let fence_arg = fence.map_or("-".to_string(), |f| f.to_string());
        let cmd = Frame::command([
            "WRITE",
            &self.name,
            &acq.to_string(),
            &seq.to_string(),
            &fence_arg,
            &self.spec.resource,
        ]);
        let valid_until = dog
            .as_ref()
            .map_or(held.valid_until(), |d| d.status().lock.valid_until);
        let wait = valid_until
            .saturating_sub(self.clock.now())
            .max(WRITE_TIMEOUT);
        let (ctx, name) = (&self.ctx, &self.name);
        let sent = || ctx.record(name, EventKind::WriteSent { acq, seq });
        let outcome = self.store.write(&self.clock, &cmd, wait, sent).await;
        if outcome == Outcome::Abandoned {
            ctx.record(name, EventKind::WriteAbandoned { acq, seq });
        }
    }

    /// Holds while the watchdog keeps the lock, as an application that
    /// leaves the lock to its watchdog does: until the watchdog reports the
    /// lock lost, or the run is over. (The checker still ends the hold at
    /// the validity of the last extension that succeeded.)
    async fn until_lost(&self, dog: &Watchdog) {
        loop {
            self.ctx.pause_point(&self.name).await;
            if dog.status().lost.is_some() || sim_now() >= self.ctx.end {
                return;
            }
            self.clock
                .sleep((self.spec.ttl / 10).max(Duration::from_millis(1)))
                .await;
        }
    }

    /// `reentry` nested re-acquisitions of the held lock (the watchdog's
    /// latest, when it runs), each recorded; false when one fails (recorded:
    /// the hold ends).
    async fn reenter(
        &self,
        under_test: &LockUnderTest,
        held: &Held,
        dog: &Option<Watchdog>,
        acq: u64,
        nested: &mut Vec<Lock>,
    ) -> bool {
        // Re-entry is the built-in reentrant lock's (a lock of one's own
        // re-enters inside its own code, if at all).
        let (LockUnderTest::BuiltIn(Some(redlock)), Held::BuiltIn(lock)) = (under_test, held)
        else {
            return true;
        };
        for _ in 0..self.spec.reentry {
            let outer = dog.as_ref().map_or_else(|| lock.clone(), |d| d.lock());
            let from = nested.last().map_or(outer.clone(), |l| Lock {
                valid_until: outer.valid_until,
                ..l.clone()
            });
            self.ctx.pause_point(&self.name).await;
            let depth = from.depth + 1;
            match redlock.reenter(&from).await {
                Ok(l) => {
                    // The history's depth is the lock's.
                    assert_eq!(l.depth, depth, "sim: a re-entry of depth {}", from.depth);
                    let nodes = l.nodes_locked;
                    nested.push(l);
                    self.ctx
                        .record(&self.name, EventKind::Reentered { acq, depth, nodes });
                }
                Err(e) => {
                    let reason = short(&e.to_string());
                    self.ctx
                        .record(&self.name, EventKind::ReentryFailed { acq, depth, reason });
                    return false;
                }
            }
        }
        true
    }

    /// Releases the re-entered levels, innermost first.
    async fn leave(&self, under_test: &LockUnderTest, nested: Vec<Lock>, acq: u64) {
        let LockUnderTest::BuiltIn(Some(redlock)) = under_test else {
            return;
        };
        let mut above: Option<u32> = None;
        for level in nested.into_iter().rev() {
            self.ctx.pause_point(&self.name).await;
            let depth = level.depth;
            // Innermost first, one level at a time, down to 2.
            assert!(
                depth >= 2 && above.is_none_or(|a| a == depth + 1),
                "sim: {} left depth {depth} after depth {above:?}",
                self.name
            );
            above = Some(depth);
            let (_, nodes) = redlock.leave(&level).await;
            self.ctx
                .record(&self.name, EventKind::ReentryReleased { acq, depth, nodes });
        }
    }

    /// Records the watchdog's extensions and the loss as they happen.
    fn watch(&self, dog: &Watchdog, acq: u64) -> tokio::task::JoinHandle<()> {
        let mut rx = dog.subscribe();
        let ctx = self.ctx.clone();
        let name = self.name.clone();
        let clock = self.clock.clone();
        tokio::spawn(async move {
            while rx.changed().await.is_ok() {
                let Status { lock, lost } = rx.borrow_and_update().clone();
                let kind = match lost {
                    Some(e) => EventKind::Lost {
                        acq,
                        reason: short(&e.to_string()),
                    },
                    None => EventKind::Extended {
                        acq,
                        validity: lock.validity,
                        valid_until: global_of(&clock, lock.valid_until),
                    },
                };
                let done = matches!(kind, EventKind::Lost { .. });
                ctx.record(&name, kind);
                if done {
                    return;
                }
            }
        })
    }
}

/// Global time at which `clock` will read `mono`, at its current rate (the
/// checker corrects for later rate changes, which the history records).
fn global_of(clock: &SimClock, mono: Duration) -> Duration {
    let rest = mono.saturating_sub(clock.now());
    sim_now()
        + clock
            .model()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .global_for(rest)
}

/// A reason for the history: no commas or newlines, not too long.
fn short(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c == ',' || c == '\n' { ';' } else { c })
        .collect();
    s.chars().take(200).collect::<String>().replace(' ', "_")
}

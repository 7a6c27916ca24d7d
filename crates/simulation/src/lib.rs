//! The simulated world: one turmoil simulation per run of a scenario.
//!
//! - [`context`]: what hosts share with the stepper (history, clocks, pauses);
//!   [`pause`]: a paused host's sockets wait out its pauses;
//!   [`sockets`]: turmoil's TCP through the client's connector seam;
//! - [`stepper`]: the loop, stepping turmoil and the fault engine
//!   ([`redlock_engine`]); [`world`]: what a fault does to the simulated
//!   hosts; [`links`]: turmoil's links brought to the engine's cuts;
//! - host programs: [`nodes`] (the real node), [`sentinel`] (failover in the
//!   `single` topology), [`workload`] (clients running the real lock client,
//!   or [`own`]: a lock of the user's own), [`store`] (the protected
//!   resource).
//!
//! [`run`] builds the world for a scenario and a seed, runs it, and returns
//! the history. Every random choice is drawn from ChaCha generators derived
//! from the seed; turmoil's own generator is seeded with it too, and its
//! epoch is fixed, so a run depends on nothing else.

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod context;
pub(crate) mod links;
pub(crate) mod nodes;
pub mod own;
pub(crate) mod pause;
pub mod sentinel;
pub(crate) mod sockets;
pub(crate) mod stepper;
pub(crate) mod store;
pub(crate) mod store_link;
pub mod workload;
pub(crate) mod world;

use bytes::Bytes;
use context::Context;
use redlock_engine::plan::fault_plan;
use redlock_engine::setup::{clock_draws, persistence_mode, NODE_PORT};
use redlock_engine::Engine;
use redlock_engine::RunFaults;
use redlock_history::{History, Recorder, Sink};
use redlock_node::persistence::{self, Disk, SharedDisk};
use redlock_node::{replication, Node};
use redlock_proto::clock::Clock;
use redlock_proto::clock::{ClockModel, SimClock, Wakeups};
use redlock_scenario::{Scenario, Topology};
use sockets::Connector;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
pub use stepper::{RunError, Stepping};
use workload::{ClientParams, LockCode};

/// Seconds since the Unix epoch at which every simulation starts.
pub const EPOCH_SECS: u64 = 1_700_000_000;

/// Capacity of each host's TCP buffers in turmoil: the queue of connections
/// not yet accepted (turmoil panics when it is full) and each stream's
/// buffer. Turmoil's default (64) is exceeded as soon as more clients than
/// that connect to one node, the store or the sentinel at once, or when a
/// paused host is released with the connects held during its pause. The
/// buffers grow only as used, so a bound this large costs nothing.
pub(crate) const TCP_CAPACITY: usize = 1 << 24;

/// Ports a host's outgoing connections take. Turmoil (0.7) never frees the
/// port of a connect that got no answer (a lost SYN, a refused or abandoned
/// connect), and panics when a host has none left; a client cut off from
/// every node retries each about once a second (the connection backoff), so
/// the whole range above the well-known ports (64512, four times turmoil's
/// default) lasts an hour of simulated isolation with the most nodes.
pub(crate) const EPHEMERAL_PORTS: std::ops::RangeInclusive<u16> = 1024..=65535;

/// Each host's clock: rates drawn from `[1 − drift, 1 + drift]`, offsets from
/// `clocks.offset`, per-host overrides applied after the draw (so overriding
/// one host does not change the others).
/// Every clock enters its timers in `wakeups`.
fn clocks(s: &Scenario, seed: u64, wakeups: &Wakeups) -> BTreeMap<String, SimClock> {
    let epoch_ms = EPOCH_SECS as i64 * 1000;
    clock_draws(s, seed)
        .into_iter()
        .map(|(h, (offset, rate))| {
            let model = ClockModel::new(epoch_ms, offset, rate);
            let clock = SimClock::with_wakeups(model, wakeups.clone(), &h);
            (h, clock)
        })
        .collect()
}

/// Runs `s` with `seed` and returns the whole history (kept in memory:
/// for tests and small runs; [`run_with`] streams it instead).
pub fn run(s: &Scenario, seed: u64) -> Result<History, RunError> {
    let kept: Arc<std::sync::Mutex<Vec<redlock_history::Event>>> = Arc::default();
    let sink = kept.clone();
    run_with(
        s,
        seed,
        Box::new(move |e| sink.lock().unwrap_or_else(|p| p.into_inner()).push(e)),
    )?;
    let events = std::mem::take(&mut *kept.lock().unwrap_or_else(|p| p.into_inner()));
    Ok(History { events })
}

/// Runs `s` with `seed`, handing each event to `sink` in time order as the
/// run goes (a few ticks behind the present), and keeping none: memory does
/// not grow with the simulated duration.
pub(crate) fn run_with(s: &Scenario, seed: u64, sink: Sink) -> Result<(), RunError> {
    run_with_code(s, seed, sink, &LockCode::BuiltIn).map(|_| ())
}

/// [`run_with`], the clients running `code`; returns the faults applied,
/// in the order they were applied.
pub(crate) fn run_with_code(
    s: &Scenario,
    seed: u64,
    sink: Sink,
    code: &LockCode,
) -> Result<RunFaults, RunError> {
    run_stepping(s, seed, sink, code, Stepping::default())
}

/// [`run_with_code`], time moved by `stepping`: the same run either way
/// (tests compare the two).
pub fn run_stepping(
    s: &Scenario,
    seed: u64,
    sink: Sink,
    code: &LockCode,
    stepping: Stepping,
) -> Result<RunFaults, RunError> {
    let recorder = Recorder::with_sink(sink);
    let applied = run_into(s, seed, recorder.clone(), code, stepping)?;
    recorder.flush_all();
    Ok(applied)
}

fn run_into(
    s: &Scenario,
    seed: u64,
    recorder: Recorder,
    code: &LockCode,
    stepping: Stepping,
) -> Result<RunFaults, RunError> {
    // What the parser validated, the world relies on.
    assert!(s.cluster.nodes >= 1, "sim: a scenario without nodes");
    assert!(!s.clients.is_empty(), "sim: a scenario without clients");
    assert!(s.tick > Duration::ZERO, "sim: a tick of zero");
    let (queue, waiting, aimer) = fault_plan(s, seed);
    let mut resources: Vec<String> = s.clients.iter().map(|c| c.resource.clone()).collect();
    resources.sort();
    resources.dedup();
    let wakeups = Wakeups::default();
    let clocks = clocks(s, seed, &wakeups);
    // Host names are distinct (the parser sees to it): each has a clock.
    assert_eq!(
        clocks.len(),
        s.host_names().len(),
        "sim: {} clocks for the hosts {:?}",
        clocks.len(),
        s.host_names()
    );
    let ctx = Context::new(
        recorder,
        clocks,
        resources,
        s.duration,
        "n1".into(),
        waiting,
        aimer,
    );
    // The stepper stops here whatever the clients do; turmoil's own cap lies
    // beyond it, so it never fires.
    let limit = s.duration + s.max_ttl * 2 + Duration::from_secs(30);
    let mut sim = build_sim(s, seed, limit);
    let node_addrs: Vec<String> = (1..=s.cluster.nodes)
        .map(|i| format!("n{i}:{NODE_PORT}"))
        .collect();
    let disks = add_nodes(&mut sim, s, &ctx);
    if s.cluster.topology == Topology::Single {
        add_sentinel(&mut sim, s, &ctx, &node_addrs, seed);
    }
    {
        let ctx = ctx.clone();
        sim.host("store", move || store::store_main(ctx.clone()));
    }
    add_clients(&mut sim, s, &ctx, &node_addrs, seed, code);
    let world = world::SimWorld {
        sim,
        ctx,
        links: links::TurmoilLinks::default(),
        disks,
        latency: s.network.latency,
    };
    let mut stepper = stepper::Stepper {
        world,
        engine: Engine::new(s, seed, queue),
        scenario: s.clone(),
        limit,
        wakeups,
        stepping: stepping_for(stepping, code),
    };
    stepper.run()?;
    Ok(stepper.engine.into_faults())
}

/// How a run with `code` moves time. Skipping trusts that every timer of
/// every host is made through [`SimClock`]; a lock of the user's own may
/// arm tokio's timers directly (the `redis` crate does for its timeouts),
/// so it runs every tick.
fn stepping_for(wanted: Stepping, code: &LockCode) -> Stepping {
    match code {
        LockCode::BuiltIn => wanted,
        LockCode::Own(_) => Stepping::EveryTick,
    }
}

/// The turmoil simulation: fixed epoch, the scenario's tick and latency,
/// turmoil's generator seeded with `seed`.
fn build_sim(s: &Scenario, seed: u64, limit: Duration) -> turmoil::Sim<'static> {
    let latency = &s.network.latency;
    assert!(
        latency.lo <= latency.hi,
        "sim: a network latency from {:?} down to {:?}",
        latency.lo,
        latency.hi
    );
    let mut builder = turmoil::Builder::new();
    builder
        .epoch(UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
        .tick_duration(s.tick)
        .simulation_duration(limit + Duration::from_secs(60))
        .rng_seed(seed)
        .tcp_capacity(TCP_CAPACITY)
        .ephemeral_ports(EPHEMERAL_PORTS)
        .min_message_latency(latency.lo)
        .max_message_latency(latency.hi);
    builder.build()
}

/// One host per node (`n1`, `n2`, ...), each with its disk; returns the
/// disks by node name.
fn add_nodes(
    sim: &mut turmoil::Sim<'static>,
    s: &Scenario,
    ctx: &Arc<Context>,
) -> BTreeMap<String, SharedDisk> {
    let mut disks: BTreeMap<String, SharedDisk> = BTreeMap::new();
    for i in 1..=s.cluster.nodes {
        let name = format!("n{i}");
        let disk = Disk::shared();
        disks.insert(name.clone(), disk.clone());
        let ctx = ctx.clone();
        let (mode, delay, single) = (
            persistence_mode(s.cluster.persistence),
            s.cluster.replication_delay,
            s.cluster.topology == Topology::Single,
        );
        let boots = Arc::new(std::sync::atomic::AtomicU64::new(0));
        sim.host(name.clone(), move || {
            let (ctx, name, disk) = (ctx.clone(), name.clone(), disk.clone());
            let first_boot = boots.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
            node_main(ctx, name, disk, mode, delay, single, first_boot)
        });
    }
    disks
}

/// One boot of a node: its keyspace from its disk, its replication (in
/// the `single` topology) and persistence, then serving.
async fn node_main(
    ctx: Arc<Context>,
    name: String,
    disk: SharedDisk,
    mode: persistence::Mode,
    delay: Duration,
    single: bool,
    first_boot: bool,
) -> turmoil::Result {
    let clock: Arc<dyn Clock> = Arc::new(ctx.clock(&name));
    let keyspace = disk
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .load(clock.wall_ms());
    let node = Node::from_keyspace(clock, keyspace);
    if single {
        replication::set_replication_delay(&node, delay);
        // A node starts as the replica of the master the sentinel
        // names (n1 at first): after a failover, an old master
        // comes back as a replica, as Sentinel reconfigures it.
        let master = ctx.master();
        if master != name && first_boot {
            // Time 0: the cluster is ready, every replica synced
            // with the (empty) master.
            replication::attach_synced(&node, &format!("{master}:{NODE_PORT}"));
        } else if master != name {
            node.execute(&[
                Bytes::from("REPLICAOF"),
                Bytes::from(master),
                Bytes::from(NODE_PORT.to_string()),
            ]);
        }
        tokio::spawn(replication::replica_task(
            node.clone(),
            Arc::new(pause::PausingConnector {
                clock: ctx.clock(&name),
                net: Connector,
            }),
        ));
    }
    if let Some(fsync) = persistence::attach(&node, disk, mode) {
        tokio::spawn(fsync);
    }
    nodes::serve(ctx, &name, node).await
}

/// The sentinel host of the `single` topology; a failover changes the
/// master the context names and is recorded.
fn add_sentinel(
    sim: &mut turmoil::Sim<'static>,
    s: &Scenario,
    ctx: &Arc<Context>,
    node_addrs: &[String],
    seed: u64,
) {
    let ctx = ctx.clone();
    let (addrs, failover_after) = (node_addrs.to_vec(), s.cluster.failover_after);
    let sentinel_seed = redlock_engine::setup::sentinel_seed(seed);
    sim.host("sentinel", move || {
        let hook_ctx = ctx.clone();
        sentinel::run(sentinel::SentinelConfig {
            nodes: addrs.clone(),
            master: addrs[0].clone(),
            failover_after,
            clock: Arc::new(ctx.clock("sentinel")),
            connector: Arc::new(Connector),
            on_failover: Arc::new(move |old: &str, new: &str| {
                let (old, new) = (sentinel::split_addr(old).0, sentinel::split_addr(new).0);
                // The sentinel promotes a replica: another node of the world.
                assert!(
                    old != new && hook_ctx.clocks.contains_key(new),
                    "sim: a failover from {old} to {new}"
                );
                hook_ctx.set_master(new);
                hook_ctx.record(
                    "sentinel",
                    redlock_history::EventKind::Failover {
                        old_master: old.to_string(),
                        new_master: new.to_string(),
                    },
                );
            }),
            seed: sentinel_seed,
            on_event: None,
        })
    });
}

/// One client host per `[[clients]]` entry, running `code`.
fn add_clients(
    sim: &mut turmoil::Sim<'static>,
    s: &Scenario,
    ctx: &Arc<Context>,
    node_addrs: &[String],
    seed: u64,
    code: &LockCode,
) {
    for spec in &s.clients {
        // Redlock clients know every master; single-master clients ask the sentinel.
        let nodes = (s.cluster.topology == Topology::Redlock).then(|| node_addrs.to_vec());
        let params = ClientParams {
            spec: spec.clone(),
            nodes,
            all_nodes: node_addrs.to_vec(),
            seed,
            code: code.clone(),
        };
        sim.client(
            spec.name.clone(),
            workload::client_main(ctx.clone(), params),
        );
    }
}

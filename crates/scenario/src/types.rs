//! The resolved, validated scenario: plain data with every default applied.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::time::Duration;

/// Most clients (`clients.count`) a scenario may have: the largest count
/// that runs to the end at a reasonable speed (measured: a 10 s scenario
/// with this many clients and [`MAX_NODES`] nodes takes 20 to 30 s of wall
/// time in a release build; turmoil's cost per tick grows with
/// hosts × links, so twice as many clients cost about ten times as much).
pub const MAX_CLIENTS: usize = 100;
/// Most nodes (`cluster.nodes`) a scenario may have (see [`MAX_CLIENTS`]).
pub const MAX_NODES: usize = 15;
/// Shortest `tick`.
pub(crate) const MIN_TICK: Duration = Duration::from_micros(100);
/// Slowest clock rate (`clock_rate`, a `clock-rate` fault's `rate`, and
/// 1 − `clocks.drift`).
pub const MIN_CLOCK_RATE: f64 = 0.01;
/// Fastest clock rate (`clock_rate`, a `clock-rate` fault's `rate`, and
/// 1 + `clocks.drift`).
pub const MAX_CLOCK_RATE: f64 = 100.0;

/// A validated scenario with every default applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Used in output paths and reports; defaults to the file stem.
    pub name: String,
    /// One paragraph shown at the top of the report.
    pub description: String,
    /// Seed for `run` unless `--seed` is given.
    pub seed: u64,
    /// Simulated time; no new lock attempt starts after it.
    pub duration: Duration,
    /// Simulation step.
    pub tick: Duration,
    /// What the scenario is meant to show.
    pub expect: Expect,
    /// `[cluster]`.
    pub cluster: Cluster,
    /// `[network]`.
    pub network: Network,
    /// Clients `c1..cC` (index 0 is `c1`), each with its `[hosts.cN]` applied.
    pub clients: Vec<ClientSpec>,
    /// `[clocks]`.
    pub clocks: Clocks,
    /// Per-host clock overrides, for every `[hosts.X]` carrying
    /// `clock_rate` or `clock_offset` (nodes, clients, store, sentinel).
    pub hosts: BTreeMap<String, HostClock>,
    /// `[[faults]]`, in file order.
    pub faults: Vec<Fault>,
    /// `[nemesis]`, when present.
    pub nemesis: Option<Nemesis>,
    /// `[sweep]`, when present.
    pub sweep: Option<Sweep>,
    /// The largest client `ttl`: what `"ttl"` multiples were resolved against.
    pub max_ttl: Duration,
}

impl Scenario {
    /// Every host of the scenario: `n1..nN`, `c1..cC`, `store`, and
    /// `sentinel` with the single topology.
    pub fn host_names(&self) -> Vec<String> {
        let mut out: Vec<String> = (1..=self.cluster.nodes).map(|i| format!("n{i}")).collect();
        out.extend(self.clients.iter().map(|c| c.name.clone()));
        out.push("store".to_string());
        if self.cluster.topology == Topology::Single {
            out.push("sentinel".to_string());
        }
        out
    }
}

/// What a scenario is meant to show (`expect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// No violation.
    Safe,
    /// At least one violation.
    Violation,
    /// Safe but degraded (an addition to the format's two values).
    Degraded,
}

impl Expect {
    /// The spelling used in files and outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Safe => "safe",
            Expect::Violation => "violation",
            Expect::Degraded => "degraded",
        }
    }
}

/// A duration range `"1ms..5ms"`, or a single `"3ms"` (then `lo == hi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurRange {
    /// Lower bound, inclusive.
    pub lo: Duration,
    /// Upper bound, inclusive; never below `lo`.
    pub hi: Duration,
}

impl DurRange {
    /// A range holding one value.
    pub fn fixed(d: Duration) -> Self {
        DurRange { lo: d, hi: d }
    }

    /// Draws a value uniformly (nanosecond resolution); consumes no
    /// randomness when `lo == hi`.
    pub fn draw<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        assert!(
            self.lo <= self.hi,
            "drawing from a backwards range {:?}..{:?}",
            self.lo,
            self.hi
        );
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let (lo, hi) = (nanos(self.lo), nanos(self.hi));
        if lo >= hi {
            return self.lo;
        }
        Duration::from_nanos(rng.random_range(lo..=hi))
    }
}

/// A signed range in milliseconds (`"-50ms..50ms"`, or one value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignedRange {
    /// Lower bound in ms, inclusive.
    pub lo_ms: f64,
    /// Upper bound in ms, inclusive; never below `lo_ms`.
    pub hi_ms: f64,
}

impl SignedRange {
    /// A range holding one value.
    pub fn fixed(ms: f64) -> Self {
        SignedRange {
            lo_ms: ms,
            hi_ms: ms,
        }
    }

    /// Draws a value uniformly; consumes no randomness when `lo == hi`.
    pub fn draw<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        // NaN compares false: a range of NaN fails too.
        assert!(
            self.lo_ms <= self.hi_ms,
            "drawing from a backwards range {}ms..{}ms",
            self.lo_ms,
            self.hi_ms
        );
        let finite = self.lo_ms.is_finite() && self.hi_ms.is_finite();
        if !finite || self.lo_ms >= self.hi_ms {
            return self.lo_ms;
        }
        rng.random_range(self.lo_ms..=self.hi_ms)
    }
}

/// `cluster.topology`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// `nodes` independent masters, quorum algorithm.
    Redlock,
    /// n1 master, other nodes async replicas, sentinel failover.
    Single,
}

impl Topology {
    /// The spelling used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Topology::Redlock => "redlock",
            Topology::Single => "single",
        }
    }
}

/// `cluster.persistence`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// A crash loses everything.
    None,
    /// AOF fsynced once per second of the node's clock.
    Everysec,
    /// fsync before each reply.
    Always,
}

impl Persistence {
    /// The spelling used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Persistence::None => "none",
            Persistence::Everysec => "everysec",
            Persistence::Always => "always",
        }
    }
}

/// What a crashed node does (`cluster.restart`, a crash fault's `restart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// Comes back at once.
    Immediate,
    /// Stays down.
    Never,
    /// Stays down this long (TTL multiples already resolved).
    After(Duration),
}

impl Restart {
    /// How long after its crash the node comes back; `None`: never.
    pub fn delay(self) -> Option<Duration> {
        match self {
            Restart::Immediate => Some(Duration::ZERO),
            Restart::Never => None,
            Restart::After(d) => Some(d),
        }
    }
}

/// `[cluster]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// Redlock or single-instance with replicas.
    pub topology: Topology,
    /// Number of servers, hosts `n1..nN`; 1 to [`MAX_NODES`].
    pub nodes: usize,
    /// Single: delay before the master ships each write (ignored by redlock).
    pub replication_delay: Duration,
    /// Single: sentinel failover delay; `None` means no failover (ignored by redlock).
    pub failover_after: Option<Duration>,
    /// What survives a crash.
    pub persistence: Persistence,
    /// What a crashed node does.
    pub restart: Restart,
}

/// `[network]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    /// Bounds of one-way message latency.
    pub latency: DurRange,
}

/// Client algorithm variant (`variant`): the correct algorithm or one of the
/// known mistakes, to show what each costs. The client's own type
/// ([`redlock_client::Variant`]): the scenario only names it.
pub use redlock_client::Variant;

/// One client (`[clients]` merged with its `[hosts.cN]`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSpec {
    /// Host name, `"c1"`...
    pub name: String,
    /// The lock's key.
    pub resource: String,
    /// Lock TTL (more than zero).
    pub ttl: Duration,
    /// Time spent holding the lock, on the client's own clock.
    pub hold: Hold,
    /// Writes to the resource per acquisition.
    pub writes: u32,
    /// Pause between attempts.
    pub think: DurRange,
    /// Delay before the first attempt.
    pub start: DurRange,
    /// Acquisition attempts per lock call (at least 1).
    pub retry_count: u32,
    /// Wait between attempts, drawn from [d/2, d].
    pub retry_delay: Duration,
    /// Per-node request timeout.
    pub request_timeout: Duration,
    /// Longest wait before reconnecting to a node after failed requests.
    pub reconnect_backoff: Duration,
    /// Clock drift allowance factor (>= 0).
    pub drift_factor: f64,
    /// Extend the lock every ttl/3 while holding it.
    pub renew: bool,
    /// Fencing tokens checked by the store.
    pub fencing: bool,
    /// Algorithm variant.
    pub variant: Variant,
    /// The lock taken on each node.
    pub lock: LockKind,
    /// Nested re-acquisitions per hold (`lock = "reentrant"` only).
    pub reentry: u32,
}

/// `clients.hold`: how long a client holds the lock it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// For a time drawn from this range, on the client's own clock (the hold
    /// still ends early if the validity check fails).
    For(DurRange),
    /// Until the validity check fails (with `renew`: until an extension
    /// fails), or the run's `duration` is over, whichever comes first: the
    /// worst case for a safety question.
    Validity,
}

impl Hold {}

/// Most nested re-acquisitions per hold (`clients.reentry`).
pub(crate) const MAX_REENTRY: u32 = 1000;

/// `clients.lock`: the lock taken on each node, the client's own type
/// ([`redlock_client::LockKind`]): the scenario names it, the client takes it.
pub use redlock_client::LockKind;

/// `[clocks]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Clocks {
    /// Each host's rate is drawn from [1 - drift, 1 + drift]; 0 <= drift <= 0.99.
    pub drift: f64,
    /// Each host's initial wall-clock offset.
    pub offset: SignedRange,
}

/// Clock overrides of one host (`[hosts.X]`).
#[derive(Clone, Debug, PartialEq)]
pub struct HostClock {
    /// Fixed clock rate, in [`MIN_CLOCK_RATE`, `MAX_CLOCK_RATE`], replacing the drawn one.
    pub clock_rate: Option<f64>,
    /// Initial wall-clock offset, replacing `[clocks] offset`.
    pub clock_offset: Option<SignedRange>,
}

/// When a fault's `at` starts counting (`after`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// From the start of the simulation (no `after`).
    Start,
    /// From the first time this client acquires the lock.
    Acquired(String),
    /// From the first time this client releases the lock.
    Released(String),
    /// From the first time this client loses the lock.
    Lost(String),
    /// From the first event of kind `event` (`acquired`, `extended`,
    /// `release_start` or `lock_call`) that client `host` records at or
    /// after `from` (`after = "c4:lock_call@8462ms"`), released as the aimed
    /// nemesis releases its faults: what `shrink` writes for a fault the
    /// aimed nemesis placed at that event's instant.
    Event {
        host: String,
        event: String,
        from: Duration,
    },
}

/// The events an instant trigger ([`Trigger::Event`]) can name: those the
/// aimed nemesis places faults at.
pub const AIMED_EVENTS: [&str; 4] = ["acquired", "extended", "release_start", "lock_call"];

/// A fault's `host`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A named host.
    Host(String),
    /// The node the sentinel currently names as master (single topology).
    Master,
}

/// One `[[faults]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// Delay from the start, or from `after`.
    pub at: Duration,
    /// What `at` counts from.
    pub after: Trigger,
    /// Line of the entry in the file (0 when it came from an override).
    pub line: usize,
    /// What happens.
    pub action: FaultAction,
}

/// What a fault does (`do` and its keys).
#[derive(Clone, Debug, PartialEq)]
pub enum FaultAction {
    /// Power loss of a node: cut off, stopped, memory and unsynced writes
    /// lost. With `kill` (`do = "kill"`), the death of its process on a
    /// machine that stays up: its kernel closes its connections (a pending
    /// request fails at once) and refuses connects until the restart;
    /// memory is lost, what the OS had of its log is kept.
    Crash {
        /// The node (or the current master).
        host: Target,
        /// Overrides `cluster.restart` for this crash.
        restart: Option<Restart>,
        /// A killed process, not a power loss.
        kill: bool,
    },
    /// Restart a crashed node now.
    Restart {
        /// The node (or the current master).
        host: Target,
    },
    /// Hosts on different sides cannot talk; hosts not listed keep their links.
    Partition {
        /// At least two non-empty, disjoint lists of host names.
        sides: Vec<Vec<String>>,
        /// Only side 1 -> side 2 is cut (exactly two sides).
        oneway: bool,
        /// Heals after this long; `None` lasts until a `heal`.
        for_: Option<Duration>,
    },
    /// Cut one host off from every other.
    Isolate {
        /// Any host (or the current master).
        host: Target,
        /// Ends after this long; `None` when `for` is absent.
        for_: Option<Duration>,
    },
    /// Remove every partition.
    Heal,
    /// Stop-the-world pause of a client or node; its clocks keep running.
    Pause {
        /// A client or a node (or the current master).
        host: Target,
        /// How long it runs nothing.
        for_: Duration,
    },
    /// Step the host's wall clock.
    ClockJump {
        /// Any host (or the current master).
        host: Target,
        /// The step in ms; may be negative.
        by_ms: f64,
    },
    /// Change the host's clock rate from now on.
    ClockRate {
        /// Any host (or the current master).
        host: Target,
        /// The new rate, in [`MIN_CLOCK_RATE`, `MAX_CLOCK_RATE`].
        rate: f64,
    },
    /// Slow one link.
    Latency {
        /// The two distinct hosts of the link.
        between: (String, String),
        /// The link's one-way latency while slowed.
        latency: DurRange,
        /// Ends after this long; `None` when `for` is absent.
        for_: Option<Duration>,
    },
}

impl FaultAction {
    /// Every `do` value, in the format's order.
    pub const KINDS: [&'static str; 10] = [
        "crash",
        "kill",
        "restart",
        "partition",
        "isolate",
        "heal",
        "pause",
        "clock-jump",
        "clock-rate",
        "latency",
    ];

    /// The `do` value of this action.
    pub fn kind(&self) -> &'static str {
        match self {
            FaultAction::Crash { kill: false, .. } => "crash",
            FaultAction::Crash { kill: true, .. } => "kill",
            FaultAction::Restart { .. } => "restart",
            FaultAction::Partition { .. } => "partition",
            FaultAction::Isolate { .. } => "isolate",
            FaultAction::Heal => "heal",
            FaultAction::Pause { .. } => "pause",
            FaultAction::ClockJump { .. } => "clock-jump",
            FaultAction::ClockRate { .. } => "clock-rate",
            FaultAction::Latency { .. } => "latency",
        }
    }
}

/// `nemesis.crash_target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashTarget {
    /// A random node.
    Node,
    /// The current master (single topology).
    Master,
}

/// `nemesis.clock_jump_target`: whose wall clock a random jump steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JumpTarget {
    /// A random node (the default: nodes expire keys by their wall clock).
    Node,
    /// A random client (clients that time by the wall clock are exposed).
    Client,
    /// A random node or client.
    Any,
}

/// `nemesis.aim`: where the nemesis's faults go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aim {
    /// Drawn blind: random times, random hosts.
    Random,
    /// Aimed at the lock: near lock events, on the hosts involved.
    Lock,
}

/// `[nemesis]`: random faults. Each `*_every` is the mean of an exponential
/// interval, `None` meaning never. Defaults when absent:
/// `crash_target = "node"`, `partition_for = "1s..5s"`,
/// `pause_for = "100ms..2s"`, `clock_jump = "-2s..2s"`,
/// `clock_jump_target = "node"`.
#[derive(Clone, Debug, PartialEq)]
pub struct Nemesis {
    /// Mean interval between crashes.
    pub crash_every: Option<Duration>,
    /// Mean interval between kills of a random node's process.
    pub kill_every: Option<Duration>,
    /// What a crash hits.
    pub crash_target: CrashTarget,
    /// Mean interval between random two-sided partitions.
    pub partition_every: Option<Duration>,
    /// How long a partition lasts.
    pub partition_for: DurRange,
    /// Mean interval between pauses of a random client or node.
    pub pause_every: Option<Duration>,
    /// How long a pause lasts.
    pub pause_for: DurRange,
    /// Mean interval between jumps of a random node's wall clock.
    pub clock_jump_every: Option<Duration>,
    /// Size of a jump in ms.
    pub clock_jump: SignedRange,
    /// Whose clock jumps.
    pub clock_jump_target: JumpTarget,
    /// Blind, or aimed at the lock.
    pub aim: Aim,
}

/// `[sweep]`: seeds and the values to vary.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// `seeds = 500` is `1..=500`; `"1000..=1999"` as written.
    pub seeds: RangeInclusive<u64>,
    /// Dotted path and its values, in file order.
    pub vary: Vec<(String, Vec<toml::Value>)>,
}

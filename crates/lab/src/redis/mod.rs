//! The lab on real Redis (`redlock-sim lab --servers redis`): every node a
//! `redis-server` process, and for `single` its replicas by `REPLICAOF` and
//! a real `redis-sentinel`, each behind the same links as the node code's
//! ([`super::net`]), so that a verdict rests on Redis itself.
//! - [`server`]: one server process, its data directory, its faults;
//! - [`node`]: a node of the lab's world that is such a server, with its
//!   [`observe`]r, which reads the history from the server itself
//!   (`MONITOR` and its replication stream, matched by [`correlate`]);
//! - [`sentinel`]: the real sentinel, configured as the scenario's, and
//!   the failovers it reports.
//!
//! What cannot act as in the simulation is refused ([`refused`]): a
//! node's power loss under `persistence = "everysec"` (a killed process
//! loses nothing the kernel had: one machine cannot lose power for one
//! node; `do = "kill"` is what the lab can do), and a node's clock fault
//! where libfaketime is not installed.

pub(crate) mod cluster;
pub(crate) mod correlate;
pub(crate) mod node;
pub(crate) mod observe;
pub(crate) mod sentinel;
pub(crate) mod server;

use redlock_scenario::{key_line, FaultAction, Persistence, Scenario, ScenarioError, Topology};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which servers a lab run's nodes are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Servers {
    /// The project's node code, in the lab's process.
    #[default]
    Node,
    /// `redis-server` and `redis-sentinel` processes.
    Redis,
}

impl Servers {
    pub fn parse(s: &str) -> Option<Servers> {
        match s {
            "node" => Some(Servers::Node),
            "redis" => Some(Servers::Redis),
            _ => None,
        }
    }

    /// As `--servers` takes it: the reverse of [`Servers::parse`].
    pub fn as_str(self) -> &'static str {
        match self {
            Servers::Node => "node",
            Servers::Redis => "redis",
        }
    }
}

/// The programs `--servers redis` needs for `topology`, each with the
/// Debian package that provides it.
fn programs(topology: Topology) -> Vec<(&'static str, &'static str)> {
    let mut p = vec![("redis-server", "redis-server")];
    if topology == Topology::Single {
        p.push(("redis-sentinel", "redis-sentinel"));
    }
    p
}

/// Every program the run needs is installed, or the error naming the
/// package to install.
pub fn check_installed(topology: Topology) -> Result<(), String> {
    for (program, package) in programs(topology) {
        if super::reach::program(&[program.to_string()]).is_none() {
            return Err(format!(
                "redlock-sim lab: --servers redis needs `{program}` on PATH (7.0 or later); \
                 install Debian's package: sudo apt-get install {package}"
            ));
        }
    }
    Ok(())
}

/// `redis-server 7.0.15`, as `redis-server --version` says.
pub fn version() -> Result<String, String> {
    let out = std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .map_err(|e| format!("redlock-sim lab: running redis-server --version: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .ok_or_else(|| format!("redlock-sim lab: redis-server --version said: {text}"))?;
    let major: u32 = v
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 7 {
        return Err(format!(
            "redlock-sim lab: --servers redis needs redis-server 7.0 or later; this one is {v}"
        ));
    }
    Ok(format!("redis-server {v}"))
}

/// The first key of `s` that real servers cannot run as the simulation
/// means it, with why.
pub fn refused(s: &Scenario, text: &str, file: &str) -> Result<(), ScenarioError> {
    let nodes: Vec<String> = (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect();
    let on_node = |t: &redlock_scenario::Target| match t {
        redlock_scenario::Target::Host(h) => nodes.contains(h),
        redlock_scenario::Target::Master => true,
    };
    for (i, f) in s.faults.iter().enumerate() {
        let at = |k: &str| {
            let key = format!("faults[{i}].{k}");
            let line = key_line(text, &key).or((f.line > 0).then_some(f.line));
            (key, line)
        };
        let why = match &f.action {
            FaultAction::Crash {
                kill: false, host, ..
            } if on_node(host) && s.cluster.persistence == Persistence::Everysec => Some(
                "with --servers redis a crash is a SIGKILL of redis-server, whose \
                     appendonly file keeps, in the kernel, every write the server made: \
                     a power loss under appendfsync everysec (which loses the last second) \
                     cannot be made on one machine; use do = \"kill\""
                    .to_string(),
            ),
            FaultAction::ClockJump { host, .. } | FaultAction::ClockRate { host, .. }
                if on_node(host) && super::faketime::library().is_none() =>
            {
                Some(
                    "with --servers redis a node's clock is moved through libfaketime, \
                     which is not installed: sudo apt-get install faketime"
                        .to_string(),
                )
            }
            FaultAction::Crash { .. }
            | FaultAction::ClockJump { .. }
            | FaultAction::ClockRate { .. }
            | FaultAction::Restart { .. }
            | FaultAction::Partition { .. }
            | FaultAction::Isolate { .. }
            | FaultAction::Heal
            | FaultAction::Pause { .. }
            | FaultAction::Latency { .. } => None,
        };
        if let Some(message) = why {
            let (key, line) = at("do");
            return Err(ScenarioError {
                file: file.to_string(),
                key,
                line,
                message,
            });
        }
    }
    let nemesis_clocks = s
        .nemesis
        .as_ref()
        .is_some_and(|n| n.clock_jump_every.is_some());
    if nemesis_clocks && super::faketime::library().is_none() {
        let key = "nemesis.clock_jump_every";
        return Err(ScenarioError {
            file: file.to_string(),
            key: key.to_string(),
            line: key_line(text, key),
            message: "with --servers redis the nodes' clocks are set through libfaketime, \
                      which is not installed: sudo apt-get install faketime"
                .to_string(),
        });
    }
    Ok(())
}

/// Whether `node` needs a clock of its own in run `seed` of `s`: one drawn
/// for it, or one a fault or the nemesis may move.
pub(crate) fn clock_needed(s: &Scenario, seed: u64, node: &str) -> bool {
    let (offset, rate) = redlock_engine::setup::clock_draws(s, seed)
        .get(node)
        .copied()
        .unwrap_or((0.0, 1.0));
    let moved = s.faults.iter().any(|f| match &f.action {
        FaultAction::ClockJump { host, .. } | FaultAction::ClockRate { host, .. } => match host {
            redlock_scenario::Target::Host(h) => h == node,
            redlock_scenario::Target::Master => true,
        },
        FaultAction::Crash { .. }
        | FaultAction::Restart { .. }
        | FaultAction::Partition { .. }
        | FaultAction::Isolate { .. }
        | FaultAction::Heal
        | FaultAction::Pause { .. }
        | FaultAction::Latency { .. } => false,
    });
    let nemesis = s
        .nemesis
        .as_ref()
        .is_some_and(|n| n.clock_jump_every.is_some());
    offset != 0.0 || rate != 1.0 || moved || nemesis
}

/// Tells runs of one lab process apart (`--jobs`).
static RUNS: AtomicU64 = AtomicU64::new(0);

/// A run's directory for its servers' data, removed when dropped (and by
/// the reaper, should the lab be killed).
pub(crate) struct DataRoot {
    pub(crate) path: PathBuf,
}

impl DataRoot {
    pub(crate) fn new(reaper: &super::process::Reaper) -> std::io::Result<DataRoot> {
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("redlock-sim-{}-{run}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        reaper.note(&format!("d{}", path.display()));
        Ok(DataRoot { path })
    }
}

impl Drop for DataRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

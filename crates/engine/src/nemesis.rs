//! The nemesis: random faults drawn from the seed before the run starts, so
//! that the faults of a run depend only on the scenario and the seed.
//!
//! Each kind with an `*_every` mean gets exponential gaps from time zero to
//! the end of the run: crashes of a random node (or the master), random
//! splits of all hosts in two sides, pauses of a random client or node,
//! wall-clock jumps of a random node (or client: `clock_jump_target`), and
//! kills of a random node's process (drawn last: a plan without them is
//! what it was before they were added).

use super::due::{Due, Origin};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use redlock_scenario::{CrashTarget, FaultAction, JumpTarget, Nemesis, Scenario, Target};
use std::time::Duration;

/// At most this many faults of each kind in one run (a tiny `*_every` must
/// not exhaust memory).
pub(crate) const MAX_EVENTS: usize = 100_000;

/// Every nemesis fault of a run, sorted by time.
pub(crate) fn plan(s: &Scenario, n: &Nemesis, rng: &mut ChaCha8Rng) -> Vec<Due> {
    let nodes: Vec<String> = (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect();
    let clients: Vec<String> = s.clients.iter().map(|c| c.name.clone()).collect();
    // What the parser validated: every kind has hosts to pick from.
    assert!(
        !nodes.is_empty() && !clients.is_empty(),
        "nemesis: a scenario with {} nodes and {} clients",
        nodes.len(),
        clients.len()
    );
    let hosts = s.host_names();
    let mut out = Vec::new();
    let times = |every: Option<Duration>, rng: &mut ChaCha8Rng| -> Vec<Duration> {
        let mut t = Duration::ZERO;
        let mut v = Vec::new();
        let Some(mean) = every else { return v };
        loop {
            let u: f64 = rng.random();
            t += mean.mul_f64(-(1.0 - u).ln());
            if t >= s.duration || v.len() >= MAX_EVENTS {
                return v;
            }
            v.push(t);
        }
    };
    for time in times(n.crash_every, rng) {
        let host = match n.crash_target {
            CrashTarget::Master => Target::Master,
            CrashTarget::Node => Target::Host(pick(&nodes, rng)),
        };
        out.push(Due {
            time,
            origin: Origin::Nemesis,
            placed: None,
            action: FaultAction::Crash {
                host,
                restart: None,
                kill: false,
            },
        });
    }
    for time in times(n.partition_every, rng) {
        let mut shuffled = hosts.clone();
        shuffled.shuffle(rng);
        let cut = rng.random_range(1..shuffled.len().max(2));
        let (a, b) = shuffled.split_at(cut.min(shuffled.len()));
        if a.is_empty() || b.is_empty() {
            continue;
        }
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.sort();
        b.sort();
        let for_ = Some(n.partition_for.draw(rng));
        out.push(Due {
            time,
            origin: Origin::Nemesis,
            placed: None,
            action: FaultAction::Partition {
                sides: vec![a, b],
                oneway: false,
                for_,
            },
        });
    }
    let pausable: Vec<String> = clients.iter().chain(&nodes).cloned().collect();
    for time in times(n.pause_every, rng) {
        let host = Target::Host(pick(&pausable, rng));
        out.push(Due {
            time,
            origin: Origin::Nemesis,
            placed: None,
            action: FaultAction::Pause {
                host,
                for_: n.pause_for.draw(rng),
            },
        });
    }
    let jumpable: Vec<String> = match n.clock_jump_target {
        JumpTarget::Node => nodes.clone(),
        JumpTarget::Client => clients.clone(),
        JumpTarget::Any => nodes.iter().chain(&clients).cloned().collect(),
    };
    for time in times(n.clock_jump_every, rng) {
        let host = Target::Host(pick(&jumpable, rng));
        out.push(Due {
            time,
            origin: Origin::Nemesis,
            placed: None,
            action: FaultAction::ClockJump {
                host,
                by_ms: n.clock_jump.draw(rng),
            },
        });
    }
    // Drawn last, so that a plan without kills is what it was before them.
    for time in times(n.kill_every, rng) {
        out.push(Due {
            time,
            origin: Origin::Nemesis,
            placed: None,
            action: FaultAction::Crash {
                host: Target::Host(pick(&nodes, rng)),
                restart: None,
                kill: true,
            },
        });
    }
    out.sort_by_key(|d| d.time);
    // A fault drawn after the run's end would never act.
    if let Some(last) = out.last() {
        assert!(
            last.time < s.duration,
            "nemesis: a fault drawn at {:?}, after the run's end at {:?}",
            last.time,
            s.duration
        );
    }
    out
}

fn pick(from: &[String], rng: &mut ChaCha8Rng) -> String {
    assert!(!from.is_empty(), "nemesis: a host picked from none");
    from[rng.random_range(0..from.len())].clone()
}

//! Issue 12's additions, by their behaviour: `[nemesis] aim = "lock"` is
//! deterministic and places its crashes and pauses where src/sim/aim.rs
//! says (at lock events, on the holder or nodes holding its key), and finds
//! in a few seeds what the blind nemesis finds rarely; `frontier` on the shipped
//! delayed-restart guidance finds a boundary inside the theory's interval;
//! `hold = "validity"` ends a hold where the format says, with and without
//! `renew`; `hold = "validity"` and `reconnect_backoff` parse, and bad
//! values are refused naming the key (exit 2, nothing written).
//!
//! Runs go through the library (runner::simulate, two threads) but for the
//! frontier and exit-code checks, which run the binary. Under a minute on
//! two shared, busy cores (load 3.5: 58 s), half of it the frontier search.

use redlock_harness::engine::due::Origin;
use redlock_harness::history::{EventKind, FaultEvent};
use redlock_harness::runner::{self, Run};
use redlock_harness::scenario::{self, FaultAction, Hold, Scenario, Target};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
const GUIDANCE: &str = "scenarios/delayed_restart_guidance.toml";

/// The shipped guidance scenario with `--set` overrides.
fn guidance(sets: &[&str]) -> Scenario {
    let o: Vec<_> = sets.iter().map(|s| runner::parse_set(s).unwrap()).collect();
    runner::load_file(Path::new(GUIDANCE), &o).unwrap_or_else(|e| panic!("{e}"))
}

fn parse(text: &str) -> Scenario {
    scenario::parse_str(text, "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn simulate(s: &Scenario, seed: u64, keep: bool) -> Run {
    let r = if keep {
        runner::simulate_keeping(s.clone(), seed)
    } else {
        runner::simulate(s.clone(), seed)
    };
    r.unwrap_or_else(|e| panic!("seed {seed}: {e}"))
}

// ---------------------------------------------------------------- aim

#[test]
fn aimed_runs_are_deterministic() {
    let s = guidance(&["cluster.restart=0.95ttl"]);
    // The same seed on two threads at once, and a blind run of it.
    let runs = crate::common::on_two_threads(&[7, 7], |_| simulate(&s, 7, false));
    let again = simulate(&s, 7, false);
    let blind = simulate(
        &guidance(&["cluster.restart=0.95ttl", "nemesis.aim=random"]),
        7,
        false,
    );
    for r in runs.values() {
        assert_eq!(r.trace, again.trace);
        assert_eq!(r.faults, again.faults);
    }
    assert!(again.faults.len() >= 10, "{} faults", again.faults.len());
    assert!(again.faults.iter().all(|a| a.origin == Origin::Nemesis));
    // The key changes what happens.
    assert_ne!(again.faults, blind.faults);
    assert_ne!(again.trace, blind.trace);
}

/// Where an aimed fault may fall after one lock event of a holder: the
/// windows of global time and the nodes it may take (src/sim/aim.rs).
struct Spot {
    windows: Vec<(Duration, Duration)>,
    nodes: BTreeSet<String>,
    holder: String,
}

/// Every lock event of `run` as src/sim/aim.rs aims at it, from the
/// history alone: an acquisition (within 2% of the TTL after it, or from
/// 10% of the TTL before the holder's validity ends to 5% after) and the
/// start of a release or of a lock call (at once); the nodes are those up and holding the
/// holder's token for the lock's key, else every node up. (No client
/// renews here: no extensions.)
fn spots(run: &Run) -> Vec<Spot> {
    let ttl = run.scenario.max_ttl;
    let all: Vec<String> = (1..=run.scenario.cluster.nodes)
        .map(|i| format!("n{i}"))
        .collect();
    let mut keys: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut down: BTreeSet<String> = BTreeSet::new();
    // client → (token, resource, valid_until)
    let mut holds: BTreeMap<String, (String, String, Duration)> = BTreeMap::new();
    let mut out = Vec::new();
    for e in &run.history.events {
        let t = e.time;
        match &e.kind {
            EventKind::KeySet { key, token, .. } => {
                keys.insert((e.host.clone(), key.clone()), token.clone());
            }
            EventKind::KeyRemoved { key, .. } => {
                keys.remove(&(e.host.clone(), key.clone()));
            }
            EventKind::Fault(FaultEvent::Crash { host, .. }) => {
                keys.retain(|(n, _), _| n != host);
                down.insert(host.clone());
            }
            EventKind::Fault(FaultEvent::Restart { host }) => {
                down.remove(host);
            }
            EventKind::Released { .. } | EventKind::Lost { .. } => {
                holds.remove(&e.host);
            }
            EventKind::Extended { .. } => panic!("no client renews in this scenario"),
            // A lock call: at once, on the caller or the nodes of the lock's
            // current holder (the first by client name), else every node up.
            EventKind::LockCall { resource, .. } => {
                let up: BTreeSet<String> =
                    all.iter().filter(|n| !down.contains(*n)).cloned().collect();
                let holding: BTreeSet<String> = holds
                    .values()
                    .find(|(_, r, _)| r == resource)
                    .map(|(token, r, _)| {
                        up.iter()
                            .filter(|n| keys.get(&((*n).clone(), r.clone())) == Some(token))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                let nodes = if !holding.is_empty() { holding } else { up };
                out.push(Spot {
                    windows: vec![(t, t)],
                    nodes,
                    holder: e.host.clone(),
                });
            }
            EventKind::Acquired { .. } | EventKind::ReleaseStart { .. } => {
                if let EventKind::Acquired {
                    token,
                    resource,
                    valid_until,
                    ..
                } = &e.kind
                {
                    holds.insert(
                        e.host.clone(),
                        (token.clone(), resource.clone(), *valid_until),
                    );
                }
                let Some((token, resource, valid_until)) = holds.get(&e.host) else {
                    continue;
                };
                let up: BTreeSet<String> =
                    all.iter().filter(|n| !down.contains(*n)).cloned().collect();
                let holding: BTreeSet<String> = up
                    .iter()
                    .filter(|n| keys.get(&((*n).clone(), resource.clone())) == Some(token))
                    .cloned()
                    .collect();
                let nodes = if !holding.is_empty() { holding } else { up };
                let windows = if matches!(e.kind, EventKind::Acquired { .. }) {
                    let end = |d: Duration| d.max(t);
                    vec![
                        (t, t + ttl.mul_f64(0.02)),
                        (
                            end(valid_until.saturating_sub(ttl.mul_f64(0.10))),
                            end(*valid_until + ttl.mul_f64(0.05)),
                        ),
                    ]
                } else {
                    vec![(t, t)]
                };
                out.push(Spot {
                    windows,
                    nodes,
                    holder: e.host.clone(),
                });
            }
            _ => {}
        }
    }
    out
}

/// (faults at a spot on a host it may take, faults within 2% of a TTL
/// after an acquisition, faults) among `run`'s nemesis crashes (`pause`
/// false: the host is a node involved) or pauses (true: the holder too).
fn placement(run: &Run, pause: bool) -> (usize, usize, usize) {
    let spots = spots(run);
    let faults: Vec<(Duration, String)> = run
        .faults
        .iter()
        .filter(|a| a.origin == Origin::Nemesis)
        .filter_map(|a| match &a.action {
            FaultAction::Crash {
                host: Target::Host(h),
                ..
            } if !pause => Some((a.time, h.clone())),
            FaultAction::Pause {
                host: Target::Host(h),
                ..
            } if pause => Some((a.time, h.clone())),
            _ => None,
        })
        .collect();
    let inside = |t: &Duration, (a, b): &(Duration, Duration)| a <= t && t <= b;
    let may_take = |s: &Spot, h: &String| s.nodes.contains(h) || (pause && s.holder == *h);
    let aimed = faults
        .iter()
        .filter(|(t, h)| {
            spots
                .iter()
                .any(|s| may_take(s, h) && s.windows.iter().any(|w| inside(t, w)))
        })
        .count();
    let after_acquire = faults
        .iter()
        .filter(|(t, _)| {
            spots
                .iter()
                .any(|s| s.windows.len() == 2 && inside(t, &s.windows[0]))
        })
        .count();
    (aimed, after_acquire, faults.len())
}

#[test]
fn aimed_crashes_fall_at_lock_events_on_nodes_holding_the_key() {
    let lock = guidance(&["cluster.restart=0.95ttl"]);
    let blind = guidance(&["cluster.restart=0.95ttl", "nemesis.aim=random"]);
    let seeds = [1, 2, 3];
    let runs = crate::common::on_two_threads(&[1, 2, 3, 101, 102, 103], |s| {
        if s > 100 {
            simulate(&blind, s - 100, true)
        } else {
            simulate(&lock, s, true)
        }
    });
    let (mut at_spot, mut after, mut total) = (0, 0, 0);
    for seed in seeds {
        let (a, b, n) = placement(&runs[&seed], false);
        // Every aimed crash, as the module promises (the skipped ones, on a
        // node already down, are not in Run::faults).
        assert_eq!(
            a, n,
            "seed {seed}: {a} of {n} crashes at a lock event on a node involved"
        );
        assert!(n >= 10, "seed {seed}: {n} crashes");
        (at_spot, after, total) = (at_spot + a, after + b, total + n);
    }
    // "Half of the crashes wait for an acquisition": measured 42 of 68.
    assert!(
        after * 10 >= total * 4,
        "{after} of {total} just after an acquisition"
    );
    // The blind nemesis, the same rate: measured 9 of 56 at such a spot,
    // 3 just after an acquisition.
    let (mut b_spot, mut b_after, mut b_total) = (0, 0, 0);
    for seed in seeds {
        let (a, b, n) = placement(&runs[&(seed + 100)], false);
        (b_spot, b_after, b_total) = (b_spot + a, b_after + b, b_total + n);
    }
    assert!(b_total >= 30, "{b_total} blind crashes");
    assert!(
        b_spot * 10 <= b_total * 4,
        "blind: {b_spot} of {b_total} at a spot"
    );
    assert!(
        b_after * 10 <= b_total * 2,
        "blind: {b_after} of {b_total} after an acquisition"
    );
    let _ = at_spot;
}

#[test]
fn aimed_finds_in_a_few_seeds_what_blind_finds_rarely() {
    // A node back at 0.95 TTL: the race is 2.5% of the TTL wide (the
    // holder's validity is about 0.988 TTL). Measured on seeds 1..=30:
    // aimed 29 violating, blind 5; on the 1..=12 run here, aimed 11,
    // blind 1 (with the network as TCP, issue 21; 12 and 3 before).
    let seeds: Vec<u64> = (1..=12).collect();
    let lock = guidance(&["cluster.restart=0.95ttl"]);
    let blind = guidance(&["cluster.restart=0.95ttl", "nemesis.aim=random"]);
    let both: Vec<u64> = seeds.iter().flat_map(|&s| [s, s + 1000]).collect();
    let outcomes = crate::common::on_two_threads(&both, |s| {
        let r = if s > 1000 {
            simulate(&blind, s - 1000, false)
        } else {
            simulate(&lock, s, false)
        };
        r.outcome() == "violation"
    });
    let count = |off: u64| seeds.iter().filter(|&&s| outcomes[&(s + off)]).count();
    let (aimed, blind) = (count(0), count(1000));
    assert!(aimed >= 10, "aimed: {aimed} of 12 seeds violate");
    assert!(blind <= 6, "blind: {blind} of 12 seeds violate");
    assert!(aimed >= blind * 2, "aimed {aimed}, blind {blind}");
}

// ------------------------------------------------------------ frontier

fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::fresh(&format!("sim-aim-{tag}"))
}

/// The committed frontier of the shipped guidance
/// (`reports/delayed-restart-guidance/frontier-cluster.restart/`, made by
/// `redlock-sim frontier` over 200 seeds; `tests/sim/frontier.rs` runs the
/// command itself on fixtures) lies where theory puts it, and its boundary
/// replays: the largest violating value still violates at its first
/// violating seed, and the smallest safe value above it is safe on a slice
/// of its seeds.
#[test]
fn frontier_of_the_delayed_restart_guidance_is_where_theory_puts_it() {
    let csv = "reports/delayed-restart-guidance/frontier-cluster.restart/frontier.csv";
    let mut rd = csv::Reader::from_path(csv).unwrap();
    // (value in TTLs, its text, violating runs, first violating seed)
    let mut rows: Vec<(f64, String, u64, Option<u64>)> = rd
        .records()
        .map(|r| {
            let r = r.unwrap();
            let v: f64 = r[0].strip_suffix("ttl").unwrap().parse().unwrap();
            (
                v,
                r[0].to_string(),
                r[3].parse().unwrap(),
                r[7].parse().ok(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let violating = rows.iter().rfind(|r| r.2 > 0).unwrap();
    let safe = rows.iter().find(|r| r.0 > violating.0).unwrap();
    let (v, s) = (violating.0, safe.0);
    // Theory (the scenario's description): a node that crashed at or after
    // the holder's lock call began and comes back after its validity
    // (TTL − 1%·TTL − 2 ms − the call's time: at most 1978 ms of the 2 s
    // TTL, 0.989 TTL) cannot help a second client while the holder holds,
    // so no restart of 0.989 TTL or more violates. Below that, the aimed
    // crashes (at an acquisition, on a node of the
    // holder's) leave the other clients, retrying every 100 ms or less with
    // a 20 ms reconnect backoff, a window a few percent of the TTL wide.
    // So: 0.9 ≤ violating < 0.989, safe ≤ 1, the two within 0.05 TTL.
    assert!((0.9..0.989).contains(&v), "violating {v}ttl");
    assert!(v < s && s <= 1.0 + 1e-9, "violating {v}ttl, safe {s}ttl");
    assert!(s - v <= 0.05 + 1e-9, "{v}..{s} wider than 0.05 TTL");
    assert_eq!(safe.2, 0);
    // The boundary replays.
    let seed = violating.3.unwrap();
    let at_v = guidance(&[&format!("cluster.restart={}", violating.1)]);
    assert_eq!(
        simulate(&at_v, seed, false).outcome(),
        "violation",
        "{} seed {seed}",
        violating.1
    );
    let at_s = guidance(&[&format!("cluster.restart={}", safe.1)]);
    let seeds: Vec<u64> = (1..=8).collect();
    let safe_runs = crate::common::on_two_threads(&seeds, |seed| {
        simulate(&at_s, seed, false).outcome() == "safe"
    });
    assert!(
        safe_runs.values().all(|&ok| ok),
        "{}: {safe_runs:?}",
        safe.1
    );
}

// ------------------------------------------------------ hold = validity

const HOLD: &str = r#"
duration = "6s"
[cluster]
nodes = 3
[clients]
count = 2
ttl = "1s"
hold = "validity"
think = "0s..50ms"
"#;

/// For each acquisition of `client`: (valid_until, the time of the
/// acquisition's release_start, whether its validity check failed).
fn holds(run: &Run, client: &str) -> Vec<(Duration, Duration, bool)> {
    let mut open: BTreeMap<u64, (Duration, bool)> = BTreeMap::new();
    let mut out = Vec::new();
    for e in run.history.events.iter().filter(|e| e.host == client) {
        match &e.kind {
            EventKind::Acquired {
                acq, valid_until, ..
            } => {
                open.insert(*acq, (*valid_until, false));
            }
            EventKind::ValidityExpired { acq } => open.get_mut(acq).unwrap().1 = true,
            EventKind::ReleaseStart { acq } => {
                let (until, expired) = open.remove(acq).unwrap();
                out.push((until, e.time, expired));
            }
            _ => {}
        }
    }
    out
}

fn times(run: &Run, client: &str, name: &str) -> Vec<Duration> {
    run.history
        .events
        .iter()
        .filter(|e| e.host == client && e.kind.name() == name)
        .map(|e| e.time)
        .collect()
}

const MS: Duration = Duration::from_millis(1);

#[test]
fn hold_validity_without_renew_ends_at_the_validity() {
    for writes in [0, 1, 2, 3] {
        let s = parse(&HOLD.replace("[clients]", &format!("[clients]\nwrites = {writes}")));
        let run = simulate(&s, 1, true);
        let hs: Vec<_> = ["c1", "c2"].iter().flat_map(|c| holds(&run, c)).collect();
        assert!(hs.len() >= 4, "writes = {writes}: {} holds", hs.len());
        for (until, release, expired) in hs {
            if writes == 0 {
                // Nothing to check between: it sleeps out the validity.
                assert!(
                    release >= until && release <= until + 2 * MS,
                    "{release:?} for {until:?}"
                );
            } else {
                // One write: it sleeps out the rest after the write; more:
                // the check before the last write fails once the validity
                // is over. Late by the round trips of the writes before
                // (at most 2 × 5 ms each).
                assert_eq!(expired, writes >= 2, "writes = {writes}");
                let late = 10 * MS * (writes - 1).max(1) + 2 * MS;
                assert!(
                    release >= until && release <= until + late,
                    "{release:?} for {until:?}"
                );
            }
        }
    }
}

#[test]
fn hold_validity_with_renew_lasts_until_an_extension_fails_or_the_run_ends() {
    let base =
        HOLD.replace("[clients]", "[clients]\nrenew = true") + "[hosts.c2]\nstart = \"100ms\"\n";
    let tenth = Duration::from_millis(100);
    // No fault: c1 holds to the end (checked every tenth of the TTL).
    let run = simulate(&parse(&base), 1, true);
    let end = run.scenario.duration;
    let c1 = holds(&run, "c1");
    assert!(times(&run, "c1", "extended").len() >= 10);
    assert_eq!(
        times(&run, "c2", "acquired")
            .iter()
            .filter(|t| **t < end)
            .count(),
        0
    );
    let (_, release, _) = c1[0];
    assert!(
        release >= end && release <= end + tenth + 2 * MS,
        "{release:?}"
    );

    // Cut off from every node at 2 s: the extensions fail (time out), the
    // watchdog reports the lock lost, and c1 lets go within a tenth of the
    // TTL of that (it leaves the lock to its watchdog: no check of its own).
    let cut = "[[faults]]\nafter = \"c1:acquired\"\nat = \"2s\"\ndo = \"partition\"\n\
               sides = [[\"c1\"], [\"n1\", \"n2\", \"n3\"]]\nfor = \"1500ms\"\n";
    let run = simulate(&parse(&(base.clone() + cut)), 1, true);
    let last = run
        .history
        .events
        .iter()
        .rev()
        .find(|e| e.host == "c1" && matches!(e.kind, EventKind::Extended { acq: 1, .. }))
        .map(|e| e.time)
        .unwrap();
    // (c1 may take the lock again after the heal: its first hold is the one
    // the partition cut.)
    assert!(
        last < Duration::from_secs(2) + 5 * MS,
        "an extension at {last:?} through the partition"
    );
    let lost = times(&run, "c1", "lost");
    let (_, release, _) = holds(&run, "c1")[0];
    assert_eq!(lost.len(), 1, "the watchdog reports the loss once");
    assert!(lost[0] > Duration::from_secs(2), "{lost:?}");
    assert!(
        release >= lost[0] && release <= lost[0] + tenth + 2 * MS,
        "{release:?}, lost at {lost:?}"
    );

    // n1 and n2 crash and come back empty: the next extension is refused
    // (lost), and c1 lets go within a tenth of the TTL.
    let crash = "[[faults]]\nafter = \"c1:acquired\"\nat = \"2s\"\ndo = \"crash\"\nhost = \"n1\"\n\
                 [[faults]]\nafter = \"c1:acquired\"\nat = \"2s\"\ndo = \"crash\"\nhost = \"n2\"\n";
    let run = simulate(&parse(&(base + crash)), 1, true);
    let lost = times(&run, "c1", "lost");
    let (until, release, _) = holds(&run, "c1")[0];
    assert_eq!(lost.len(), 1);
    assert!(until < lost[0], "the first validity was renewed");
    assert!(
        release >= lost[0] && release <= lost[0] + tenth + 2 * MS,
        "{release:?}, lost at {lost:?}"
    );
}

// ------------------------------------------------------------- parsing

fn error(text: &str) -> scenario::ScenarioError {
    scenario::parse_str(text, "t.toml").expect_err("expected an error")
}

#[test]
fn hold_validity_parses_in_clients_and_hosts() {
    let s = parse("duration = \"5s\"\n[clients]\nhold = \"validity\"\n");
    assert!(s.clients.iter().all(|c| c.hold == Hold::Validity));
    let s = parse("duration = \"5s\"\n[hosts.c2]\nhold = \"validity\"\n");
    assert_ne!(s.clients[0].hold, Hold::Validity);
    assert_eq!(s.clients[1].hold, Hold::Validity);
    let s = scenario::parse_with_overrides(
        "duration = \"5s\"\n",
        "t.toml",
        &[runner::parse_set("clients.hold=validity").unwrap()],
    )
    .unwrap();
    assert!(s.clients.iter().all(|c| c.hold == Hold::Validity));
    for (text, key, line) in [
        (
            "duration = \"5s\"\n[clients]\nhold = \"forever\"\n",
            "clients.hold",
            3,
        ),
        (
            "duration = \"5s\"\n[clients]\nhold = \"Validity\"\n",
            "clients.hold",
            3,
        ),
        (
            "duration = \"5s\"\n[clients]\nhold = 3\n",
            "clients.hold",
            3,
        ),
        (
            "duration = \"5s\"\n\n[hosts.c2]\nhold = \"until-lost\"\n",
            "hosts.c2.hold",
            4,
        ),
    ] {
        let e = error(text);
        assert_eq!((e.key.as_str(), e.line), (key, Some(line)), "{e}");
        assert!(e.message.contains("\"validity\""), "{e}");
    }
}

#[test]
fn reconnect_backoff_parses_and_refuses_zero_or_negative() {
    let s = parse("duration = \"5s\"\n");
    assert!(s
        .clients
        .iter()
        .all(|c| c.reconnect_backoff == Duration::from_secs(1)));
    let s = parse("duration = \"5s\"\n[clients]\nreconnect_backoff = \"20ms\"\n[hosts.c2]\nreconnect_backoff = \"2s\"\n");
    assert_eq!(s.clients[0].reconnect_backoff, 20 * MS);
    assert_eq!(s.clients[1].reconnect_backoff, Duration::from_secs(2));
    for (value, phrase) in [
        ("\"0s\"", "more than zero"),
        ("\"-1s\"", "negative"),
        ("5", "unit"),
    ] {
        let e = error(&format!(
            "duration = \"5s\"\n[clients]\nreconnect_backoff = {value}\n"
        ));
        assert_eq!(
            (e.key.as_str(), e.line),
            ("clients.reconnect_backoff", Some(3)),
            "{e}"
        );
        assert!(e.message.contains(phrase), "{e}");
    }
    // Through the binary: exit 2, the key named, nothing written.
    let dir = temp_dir("backoff");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "duration = \"5s\"\n[hosts.c1]\nreconnect_backoff = \"0ms\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = Command::new(BIN)
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.toml:3: hosts.c1.reconnect_backoff"),
        "{stderr}"
    );
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aimed_pauses_fall_at_lock_events_on_the_holder_or_its_nodes() {
    let s = guidance(&[
        "cluster.restart=0.95ttl",
        "nemesis.crash_every=5s",
        "nemesis.pause_every=500ms",
        "nemesis.pause_for=50ms",
    ]);
    let run = simulate(&s, 1, true);
    let (aimed, _, n) = placement(&run, true);
    assert!(n >= 20, "{n} pauses");
    assert_eq!(
        aimed, n,
        "{aimed} of {n} pauses at a lock event on a host involved"
    );
    let (aimed, _, n) = placement(&run, false);
    assert_eq!(aimed, n, "{aimed} of {n} crashes");
    // Blind pauses land at such a spot far less often (measured: aimed 48
    // of 48, blind 4 of 46).
    let s = guidance(&[
        "cluster.restart=0.95ttl",
        "nemesis.crash_every=5s",
        "nemesis.pause_every=500ms",
        "nemesis.pause_for=50ms",
        "nemesis.aim=random",
    ]);
    let (aimed, _, n) = placement(&simulate(&s, 1, true), true);
    assert!(
        n >= 20 && aimed * 2 <= n,
        "blind: {aimed} of {n} pauses at a spot"
    );
}

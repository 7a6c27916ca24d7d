//! Scenario files: the format document's example, defaults, every kind of
//! error (key path, line, message), overrides, sweeps, and a fuzz pass that
//! mutated files never panic.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common;

use common::mutate;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redlock_harness::scenario::*;

const EXAMPLE: &str = r#"name = "crash-restart-immediate"
description = "Three masters. c1 cannot reach n1 and locks n2+n3; n2 crashes and comes back empty at once; c2 then locks n1+n2 while c1 still holds."
duration = "30s"
expect = "violation"

[cluster]
topology = "redlock"
nodes = 3
restart = "immediate"

[clients]
count = 2
ttl = "10s"
hold = "8s"

[hosts.c2]
start = "3s"

[[faults]]
at = "0s"
do = "partition"
sides = [["c1"], ["n1"]]
for = "2s"

[[faults]]
at = "1s"
after = "c1:acquired"
do = "crash"
host = "n2"
"#;

/// A file using every section and fault kind, for the fuzz pass.
const FULL: &str = r#"name = "full"
description = "everything"
seed = 7
duration = "20s"
tick = "1ms"
expect = "safe"

[cluster]
topology = "single"
nodes = 3
replication_delay = "5ms"
failover_after = "2s"
persistence = "everysec"
restart = "0.5ttl"

[network]
latency = "1ms..5ms"

[clients]
count = 3
ttl = "4s"
hold = "1s..2s"
writes = 3
think = "0s..100ms"
start = "0s"
retry_count = 3
retry_delay = "200ms"
request_timeout = "50ms"
drift_factor = 0.01
renew = true
fencing = true
variant = "spec"

[clocks]
drift = 0.001
offset = "-50ms..50ms"

[hosts.c2]
start = "1s"
variant = "no-validity-check"

[hosts.n2]
clock_rate = 1.05
clock_offset = "20ms"

[[faults]]
at = "1s"
do = "crash"
host = "master"
restart = "never"

[[faults]]
at = "2s"
do = "restart"
host = "n1"

[[faults]]
at = "0s"
do = "partition"
sides = [["c1", "c2"], ["n1"]]
oneway = true
for = "ttl"

[[faults]]
at = "3s"
do = "isolate"
host = "sentinel"
for = "1s"

[[faults]]
at = "4s"
do = "heal"

[[faults]]
at = "0s"
after = "c1:acquired"
do = "pause"
host = "c1"
for = "5s"

[[faults]]
at = "5s"
do = "clock-jump"
host = "n3"
by = "+8s"

[[faults]]
at = "6s"
do = "clock-rate"
host = "store"
rate = 0.9

[[faults]]
at = "7s"
do = "latency"
between = ["c3", "n2"]
latency = "100ms..200ms"
for = "2s"

[[faults]]
at = "8s"
do = "kill"
host = "n3"

[nemesis]
crash_every = "10s"
crash_target = "master"
partition_every = "5s"
partition_for = "1s..3s"
pause_every = "7s"
pause_for = "50ms..1s"
clock_jump_every = "9s"
clock_jump = "-5s..5s"

[sweep]
seeds = 20
[sweep.vary]
"cluster.restart" = ["immediate", "0.5ttl", "ttl", "1.5ttl"]
"hosts.n2.clock_rate" = [1.0, 1.05]
"#;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Parses `text` expecting an error; checks key, line and a phrase.
fn error(text: &str, key: &str, line: Option<usize>, phrase: &str) -> ScenarioError {
    let e = parse_str(text, "t.toml").expect_err("expected an error");
    assert_eq!(e.key, key, "key of: {e}");
    assert_eq!(e.line, line, "line of: {e}");
    assert!(
        e.message.contains(phrase),
        "message of {e:?} lacks {phrase:?}"
    );
    assert_eq!(e.file, "t.toml");
    e
}

#[test]
fn example_from_the_format_document() {
    let s = parse_str(EXAMPLE, "scenarios/example.toml").unwrap();
    assert_eq!(s.name, "crash-restart-immediate");
    assert!(s.description.starts_with("Three masters."));
    assert_eq!(s.duration, secs(30));
    assert_eq!(s.expect, Expect::Violation);
    assert_eq!(s.seed, 1);
    assert_eq!(s.tick, ms(1));
    assert_eq!(s.cluster.topology, Topology::Redlock);
    assert_eq!(s.cluster.nodes, 3);
    assert_eq!(s.cluster.restart, Restart::Immediate);
    assert_eq!(s.clients.len(), 2);
    assert_eq!(s.clients[0].name, "c1");
    assert_eq!(s.clients[1].name, "c2");
    for c in &s.clients {
        assert_eq!(c.ttl, secs(10));
        assert_eq!(c.hold, Hold::For(DurRange::fixed(secs(8))));
    }
    assert_eq!(s.clients[0].start, DurRange::fixed(Duration::ZERO));
    assert_eq!(s.clients[1].start, DurRange::fixed(secs(3)));
    assert_eq!(s.max_ttl, secs(10));
    assert!(s.hosts.is_empty());
    assert_eq!(
        s.faults,
        vec![
            Fault {
                at: Duration::ZERO,
                after: Trigger::Start,
                line: 19,
                action: FaultAction::Partition {
                    sides: vec![vec!["c1".to_string()], vec!["n1".to_string()]],
                    oneway: false,
                    for_: Some(secs(2)),
                },
            },
            Fault {
                at: secs(1),
                after: Trigger::Acquired("c1".to_string()),
                line: 25,
                action: FaultAction::Crash {
                    host: Target::Host("n2".to_string()),
                    restart: None,
                    kill: false,
                },
            },
        ]
    );
    assert_eq!(s.nemesis, None);
    assert_eq!(s.sweep, None);
    assert_eq!(s.host_names(), ["n1", "n2", "n3", "c1", "c2", "store"]);
}

#[test]
fn defaults() {
    let s = parse_str("duration = \"10s\"\n", "dir/my-scenario.toml").unwrap();
    assert_eq!(s.name, "my-scenario");
    assert_eq!(s.description, "");
    assert_eq!(s.seed, 1);
    assert_eq!(s.duration, secs(10));
    assert_eq!(s.tick, ms(1));
    assert_eq!(s.expect, Expect::Safe);
    assert_eq!(
        s.cluster,
        Cluster {
            topology: Topology::Redlock,
            nodes: 5,
            replication_delay: Duration::ZERO,
            failover_after: None,
            persistence: Persistence::None,
            restart: Restart::Immediate,
        }
    );
    assert_eq!(
        s.network.latency,
        DurRange {
            lo: ms(1),
            hi: ms(5)
        }
    );
    assert_eq!(s.clients.len(), 2);
    for (i, c) in s.clients.iter().enumerate() {
        assert_eq!(
            *c,
            ClientSpec {
                name: format!("c{}", i + 1),
                resource: "lock".to_string(),
                ttl: secs(10),
                hold: Hold::For(DurRange {
                    lo: secs(1),
                    hi: secs(3)
                }),
                writes: 2,
                think: DurRange {
                    lo: Duration::ZERO,
                    hi: ms(500)
                },
                start: DurRange::fixed(Duration::ZERO),
                retry_count: 3,
                retry_delay: ms(200),
                request_timeout: ms(50),
                reconnect_backoff: secs(1),
                drift_factor: 0.01,
                renew: false,
                fencing: false,
                variant: Variant::Spec,
                lock: LockKind::SetNx,
                reentry: 0,
            }
        );
    }
    assert_eq!(
        s.clocks,
        Clocks {
            drift: 0.0,
            offset: SignedRange::fixed(0.0)
        }
    );
    assert_eq!(s.hosts, BTreeMap::new());
    assert!(s.faults.is_empty());
    assert_eq!(s.nemesis, None);
    assert_eq!(s.sweep, None);
    assert_eq!(s.max_ttl, secs(10));
}

#[test]
fn full_file_parses() {
    let s = parse_str(FULL, "full.toml").unwrap();
    assert_eq!(s.cluster.topology, Topology::Single);
    assert_eq!(s.cluster.restart, Restart::After(secs(2)));
    assert_eq!(s.cluster.failover_after, Some(secs(2)));
    assert_eq!(s.cluster.persistence, Persistence::Everysec);
    assert_eq!(s.clients[1].variant, Variant::NoValidityCheck);
    assert_eq!(s.clients[1].start, DurRange::fixed(secs(1)));
    assert_eq!(s.clients[0].variant, Variant::Spec);
    assert!(s
        .clients
        .iter()
        .all(|c| c.renew && c.fencing && c.writes == 3));
    assert_eq!(
        s.clocks.offset,
        SignedRange {
            lo_ms: -50.0,
            hi_ms: 50.0
        }
    );
    assert_eq!(
        s.hosts["n2"],
        HostClock {
            clock_rate: Some(1.05),
            clock_offset: Some(SignedRange::fixed(20.0))
        }
    );
    assert_eq!(s.faults.len(), 10);
    assert_eq!(
        s.faults[0].action,
        FaultAction::Crash {
            host: Target::Master,
            restart: Some(Restart::Never),
            kill: false,
        }
    );
    assert_eq!(
        s.faults[2].action,
        FaultAction::Partition {
            sides: vec![vec!["c1".into(), "c2".into()], vec!["n1".into()]],
            oneway: true,
            for_: Some(secs(4)),
        }
    );
    assert_eq!(s.faults[5].after, Trigger::Acquired("c1".into()));
    assert_eq!(
        s.faults[6].action,
        FaultAction::ClockJump {
            host: Target::Host("n3".into()),
            by_ms: 8000.0
        }
    );
    assert_eq!(
        s.faults[7].action,
        FaultAction::ClockRate {
            host: Target::Host("store".into()),
            rate: 0.9
        }
    );
    assert_eq!(
        s.faults[8].action,
        FaultAction::Latency {
            between: ("c3".into(), "n2".into()),
            latency: DurRange {
                lo: ms(100),
                hi: ms(200)
            },
            for_: Some(secs(2)),
        }
    );
    let mut kinds: Vec<&str> = s.faults.iter().map(|f| f.action.kind()).collect();
    let mut all = FaultAction::KINDS.to_vec();
    kinds.sort_unstable();
    all.sort_unstable();
    assert_eq!(kinds, all, "one fault of each kind");
    let n = s.nemesis.clone().unwrap();
    assert_eq!(n.crash_target, CrashTarget::Master);
    assert_eq!(
        n.clock_jump,
        SignedRange {
            lo_ms: -5000.0,
            hi_ms: 5000.0
        }
    );
    assert_eq!(
        n.partition_for,
        DurRange {
            lo: secs(1),
            hi: secs(3)
        }
    );
    assert!(s.host_names().contains(&"sentinel".to_string()));
    check_sweep(FULL, "full.toml").unwrap();
}

#[test]
fn nemesis_defaults() {
    let s = parse_str(
        "duration = \"10s\"\n[nemesis]\ncrash_every = \"5s\"\n",
        "t.toml",
    )
    .unwrap();
    let n = s.nemesis.unwrap();
    assert_eq!(n.crash_every, Some(secs(5)));
    assert_eq!(n.crash_target, CrashTarget::Node);
    assert_eq!(n.partition_every, None);
    assert_eq!(
        n.partition_for,
        DurRange {
            lo: secs(1),
            hi: secs(5)
        }
    );
    assert_eq!(
        n.pause_for,
        DurRange {
            lo: ms(100),
            hi: secs(2)
        }
    );
    assert_eq!(
        n.clock_jump,
        SignedRange {
            lo_ms: -2000.0,
            hi_ms: 2000.0
        }
    );
}

#[test]
fn variants_round_trip() {
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.as_str()), Some(v));
        let text = format!(
            "duration = \"1s\"\n[clients]\nvariant = \"{}\"\n",
            v.as_str()
        );
        assert_eq!(parse_str(&text, "t.toml").unwrap().clients[0].variant, v);
    }
    error(
        "duration = \"1s\"\n[clients]\nvariant = \"sequental\"\n",
        "clients.variant",
        Some(3),
        "sequential",
    );
}

#[test]
fn display() {
    let e = ScenarioError {
        file: "a.toml".into(),
        key: "clients.ttl".into(),
        line: Some(3),
        message: "bad".into(),
    };
    assert_eq!(e.to_string(), "a.toml:3: clients.ttl: bad");
    let e = ScenarioError {
        file: "a.toml".into(),
        key: String::new(),
        line: None,
        message: "bad".into(),
    };
    assert_eq!(e.to_string(), "a.toml: bad");
}

#[test]
fn unknown_keys() {
    let e = error(
        "duration = \"10s\"\n[cluster]\nnodez = 3\n",
        "cluster.nodez",
        Some(3),
        "did you mean `nodes`?",
    );
    assert!(e.message.contains("allowed keys: topology, nodes"), "{e}");
    error(
        "duraton = \"10s\"\n",
        "duraton",
        Some(1),
        "did you mean `duration`?",
    );
    error(
        "duration = \"10s\"\n[clients]\nttl = \"1s\"\ntll = \"2s\"\n",
        "clients.tll",
        Some(4),
        "unknown key `tll`",
    );
    error(
        "duration = \"10s\"\n[hosts.c1]\ncount = 3\n",
        "hosts.c1.count",
        Some(3),
        "unknown key `count`",
    );
    error(
        "duration = \"10s\"\n[hosts.n1]\nttl = \"3s\"\n",
        "hosts.n1.ttl",
        Some(3),
        "allowed keys: clock_rate, clock_offset",
    );
    error(
        "duration = \"10s\"\n[[faults]]\nat = \"1s\"\ndo = \"crash\"\nhost = \"n1\"\nfor = \"1s\"\n",
        "faults[0].for",
        Some(6),
        "(do = \"crash\")",
    );
    error(
        "duration = \"10s\"\n[nemesis]\ncrash_evry = \"1s\"\n",
        "nemesis.crash_evry",
        Some(3),
        "crash_every",
    );
    error(
        "duration = \"10s\"\n[sweep]\nseed = 3\n",
        "sweep.seed",
        Some(3),
        "did you mean `seeds`?",
    );
    // A table header that is unknown.
    error(
        "duration = \"10s\"\n\n[clusters]\nnodes = 3\n",
        "clusters",
        Some(3),
        "did you mean `cluster`?",
    );
}

#[test]
fn bare_number_durations() {
    error(
        "duration = 10\n",
        "duration",
        Some(1),
        "durations need a unit",
    );
    error(
        "duration = \"10s\"\n[clients]\nttl = 10\n",
        "clients.ttl",
        Some(3),
        "durations need a unit",
    );
    error(
        "duration = \"10s\"\n[network]\nlatency = 1.5\n",
        "network.latency",
        Some(3),
        "durations need a unit",
    );
    error("duration = \"10\"\n", "duration", Some(1), "unit");
}

#[test]
fn bad_ranges_and_values() {
    error(
        "duration = \"10s\"\n[clients]\nhold = \"3s..1s\"\n",
        "clients.hold",
        Some(3),
        "runs backwards",
    );
    error(
        "duration = \"10s\"\n[network]\nlatency = \"1ms..x\"\n",
        "network.latency",
        Some(3),
        "not a duration",
    );
    error(
        "duration = \"10s\"\n[network]\nlatency = \"1ms..=5ms\"\n",
        "network.latency",
        Some(3),
        "without \"=\"",
    );
    error(
        "duration = \"10s\"\n[clocks]\noffset = \"50ms..-50ms\"\n",
        "clocks.offset",
        Some(3),
        "runs backwards",
    );
    error(
        "duration = \"10s\"\n[clocks]\ndrift = 1.0\n",
        "clocks.drift",
        Some(3),
        "from 0 to 0.99",
    );
    error(
        "duration = \"10s\"\n[clients]\ndrift_factor = -0.1\n",
        "clients.drift_factor",
        Some(3),
        "negative",
    );
    error(
        "duration = \"10s\"\nexpect = \"unsafe\"\n",
        "expect",
        Some(2),
        "\"safe\", \"violation\"",
    );
    error(
        "duration = \"10s\"\nseed = -1\n",
        "seed",
        Some(2),
        "out of range",
    );
    error(
        "duration = \"10s\"\nseed = \"1\"\n",
        "seed",
        Some(2),
        "expected an integer",
    );
    error(
        "duration = \"10s\"\n[clients]\nttl = \"0.5ttl\"\n",
        "clients.ttl",
        Some(3),
        "TTL multiple is not allowed",
    );
    error(
        "duration = \"10s\"\n[cluster]\nrestart = \"soon\"\n",
        "cluster.restart",
        Some(3),
        "\"immediate\", \"never\"",
    );
    error(
        "duration = \"10s\"\n[cluster]\nnodes = 2.0\n",
        "cluster.nodes",
        Some(3),
        "expected an integer",
    );
    error("duration = \"0s\"\n", "duration", Some(1), "more than zero");
    error(
        "duration = \"10s\"\ncluster = 3\n",
        "cluster",
        Some(2),
        "expected a table [cluster]",
    );
    error(
        "duration = \"10s\"\n[hosts.n1]\nclock_rate = 0\n",
        "hosts.n1.clock_rate",
        Some(3),
        "from 0.01 to 100",
    );
    error(
        "duration = \"10s\"\nname = \"../x\"\n",
        "name",
        Some(2),
        "output paths",
    );
}

#[test]
fn negative_or_zero_counts() {
    error(
        "duration = \"10s\"\n[clients]\ncount = -1\n",
        "clients.count",
        Some(3),
        "out of range",
    );
    error(
        "duration = \"10s\"\n[clients]\ncount = 0\n",
        "clients.count",
        Some(3),
        "from 1 to",
    );
    error(
        "duration = \"10s\"\n[cluster]\nnodes = 0\n",
        "cluster.nodes",
        Some(3),
        "out of range",
    );
    error(
        "duration = \"10s\"\n[clients]\nwrites = -2\n",
        "clients.writes",
        Some(3),
        "out of range",
    );
    error(
        "duration = \"10s\"\n[clients]\nretry_count = 0\n",
        "clients.retry_count",
        Some(3),
        "out of range",
    );
}

#[test]
fn missing_duration() {
    let e = error(
        "seed = 3\n",
        "duration",
        None,
        "required key `duration` is missing",
    );
    assert_eq!(e.to_string(), "t.toml: duration: required key `duration` is missing: add e.g. `duration = \"30s\"` at the top level");
}

#[test]
fn unknown_hosts() {
    error(
        "duration = \"10s\"\n[cluster]\nnodes = 3\n\n[hosts.n4]\nclock_rate = 1.1\n",
        "hosts.n4",
        Some(5),
        "unknown host \"n4\"",
    );
    error(
        "duration = \"10s\"\n[hosts.c3]\nstart = \"1s\"\n",
        "hosts.c3",
        Some(2),
        "c1, c2",
    );
    error(
        "duration = \"10s\"\n[hosts.sentinel]\nclock_rate = 1.1\n",
        "hosts.sentinel",
        Some(2),
        "single",
    );
    error(
        "duration = \"10s\"\n[hosts.n01]\nclock_rate = 1.1\n",
        "hosts.n01",
        Some(2),
        "n1..n5",
    );
    let f = "duration = \"10s\"\n[[faults]]\nat = \"1s\"\n";
    error(
        &format!("{f}do = \"crash\"\nhost = \"n9\"\n"),
        "faults[0].host",
        Some(5),
        "unknown host \"n9\"",
    );
    error(
        &format!("{f}do = \"crash\"\nhost = \"c1\"\n"),
        "faults[0].host",
        Some(5),
        "nodes",
    );
    error(
        &format!("{f}do = \"crash\"\nhost = \"master\"\n"),
        "faults[0].host",
        Some(5),
        "single",
    );
    // The store may be paused (a slow database); the sentinel may not
    // (scenarios::a_pause_of_the_sentinel_is_refused_naming_what_can_be_paused).
    parse_str(
        &format!("{f}do = \"pause\"\nhost = \"store\"\nfor = \"1s\"\n"),
        "t.toml",
    )
    .expect("a pause of the store is allowed");
    error(
        &format!("{f}do = \"partition\"\nsides = [[\"c1\"], [\"x\"]]\n"),
        "faults[0].sides[1][0]",
        Some(5),
        "unknown host \"x\"",
    );
    error(
        &format!("{f}do = \"partition\"\nsides = [[\"c1\"], [\"c1\"]]\n"),
        "faults[0].sides[1][0]",
        Some(5),
        "two sides",
    );
    error(
        &format!("{f}do = \"partition\"\nsides = [[\"c1\"], []]\n"),
        "faults[0].sides[1]",
        Some(5),
        "at least one host",
    );
    error(
        &format!("{f}do = \"partition\"\nsides = [[\"c1\"]]\n"),
        "faults[0].sides",
        Some(5),
        "at least two sides",
    );
    error(
        &format!("{f}do = \"latency\"\nbetween = [\"c1\", \"n6\"]\nlatency = \"5ms\"\n"),
        "faults[0].between[1]",
        Some(5),
        "unknown host",
    );
    error(
        &format!("{f}do = \"heal\"\nafter = \"c5:acquired\"\n"),
        "faults[0].after",
        Some(5),
        "unknown host \"c5\"",
    );
    error(
        &format!("{f}do = \"heal\"\nafter = \"n1:acquired\"\n"),
        "faults[0].after",
        Some(5),
        "not a client",
    );
    error(
        &format!("{f}do = \"heal\"\nafter = \"c1:won\"\n"),
        "faults[0].after",
        Some(5),
        "unknown event",
    );
}

#[test]
fn fault_kinds_and_required_keys() {
    let e = error(
        "duration = \"10s\"\n\n[[faults]]\nat = \"1s\"\ndo = \"explode\"\n",
        "faults[0].do",
        Some(5),
        "unknown fault \"explode\"",
    );
    assert!(
        e.message.contains(
            "crash, kill, restart, partition, isolate, heal, pause, clock-jump, clock-rate, latency"
        ),
        "{e}"
    );
    error(
        "duration = \"10s\"\n[[faults]]\nat = \"1s\"\ndo = \"clock_jump\"\n",
        "faults[0].do",
        Some(4),
        "did you mean \"clock-jump\"?",
    );
    error(
        "duration = \"10s\"\n[[faults]]\nat = \"1s\"\ndo = \"crash\"\n",
        "faults[0].host",
        Some(2),
        "needs `host`",
    );
    error(
        "duration = \"10s\"\n[[faults]]\nat = \"1s\"\ndo = \"pause\"\nhost = \"c1\"\n",
        "faults[0].for",
        Some(2),
        "needs `for`",
    );
    error(
        "duration = \"10s\"\n[[faults]]\ndo = \"heal\"\n",
        "faults[0].at",
        Some(2),
        "needs `at`",
    );
    error(
        "duration = \"10s\"\n[[faults]]\nat = \"1s\"\n",
        "faults[0].do",
        Some(2),
        "needs `do`",
    );
    error(
        "duration = \"10s\"\n[[faults]]\nat = \"1s\"\ndo = \"heal\"\n[[faults]]\nat = \"2s\"\ndo = \"clock-jump\"\nhost = \"n1\"\nby = 8\n",
        "faults[1].by",
        Some(9),
        "durations need a unit",
    );
    error(
        "duration = \"10s\"\n[faults]\nat = \"1s\"\n",
        "faults",
        Some(2),
        "[[faults]]",
    );
}

#[test]
fn ttl_multiples_in_at_and_for() {
    let text = "duration = \"10s\"\n[clients]\nttl = \"4s\"\n[hosts.c2]\nttl = \"6s\"\n[[faults]]\nat = \"0.5ttl\"\ndo = \"isolate\"\nhost = \"n1\"\nfor = \"2ttl\"\n";
    let s = parse_str(text, "t.toml").unwrap();
    assert_eq!(s.max_ttl, secs(6));
    assert_eq!(s.faults[0].at, secs(3));
    assert_eq!(
        s.faults[0].action,
        FaultAction::Isolate {
            host: Target::Host("n1".into()),
            for_: Some(secs(12))
        }
    );
}

#[test]
fn toml_syntax_errors() {
    let e = parse_str("duration = \"10s\"\n[cluster\nnodes = 3\n", "t.toml").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("not valid TOML"), "{e}");
    let e = parse_str("duration = \"10s\"\nduration = \"5s\"\n", "t.toml").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("duplicate key"), "{e}");
}

#[test]
fn load_reports_unreadable_files() {
    let e = load(std::path::Path::new("/nonexistent/dir/x.toml")).unwrap_err();
    assert_eq!(e.file, "/nonexistent/dir/x.toml");
    assert!(
        e.to_string()
            .starts_with("/nonexistent/dir/x.toml: cannot read"),
        "{e}"
    );
}

#[test]
fn overrides() {
    let text = "duration = \"10s\"\n[clients]\nttl = \"8s\"\n[hosts.c2]\nttl = \"12s\"\n";
    let s = parse_with_overrides(
        text,
        "t.toml",
        &[("cluster.restart".into(), "0.5ttl".into())],
    )
    .unwrap();
    assert_eq!(s.cluster.restart, Restart::After(secs(6)));
    let s = parse_with_overrides(
        text,
        "t.toml",
        &[("hosts.n2.clock_rate".into(), toml::Value::Float(1.05))],
    )
    .unwrap();
    assert_eq!(s.hosts["n2"].clock_rate, Some(1.05));
    assert_eq!(s.hosts["n2"].clock_offset, None);
    // An override of an existing key replaces it, and TTL multiples follow overridden ttls.
    let s = parse_with_overrides(
        text,
        "t.toml",
        &[
            ("clients.ttl".into(), "20s".into()),
            ("cluster.restart".into(), "ttl".into()),
        ],
    )
    .unwrap();
    assert_eq!(s.max_ttl, secs(20));
    assert_eq!(s.cluster.restart, Restart::After(secs(20)));
    let e = parse_with_overrides(
        text,
        "t.toml",
        &[("cluster.nodez".into(), toml::Value::Integer(3))],
    )
    .unwrap_err();
    assert_eq!(e.key, "cluster.nodez");
    assert!(e.message.contains("did you mean `nodes`?"), "{e}");
    assert!(e.message.contains("cluster.nodez = 3"), "{e}");
    let e =
        parse_with_overrides(text, "t.toml", &[("cluster.nodes".into(), "3".into())]).unwrap_err();
    assert_eq!(e.key, "cluster.nodes");
    let e =
        parse_with_overrides(text, "t.toml", &[("duration.x".into(), "3s".into())]).unwrap_err();
    assert_eq!(e.key, "duration.x");
    assert!(e.message.contains("not a table"), "{e}");
    let e = parse_with_overrides(
        text,
        "t.toml",
        &[("sweep.seeds".into(), toml::Value::Integer(3))],
    )
    .unwrap_err();
    assert!(e.message.contains("cannot be varied"), "{e}");
    let e =
        parse_with_overrides(text, "t.toml", &[("faults[0].at".into(), "1s".into())]).unwrap_err();
    assert!(e.message.contains("does not exist"), "{e}");
    let s =
        parse_with_overrides(EXAMPLE, "t.toml", &[("faults[1].host".into(), "n3".into())]).unwrap();
    assert_eq!(
        s.faults[1].action,
        FaultAction::Crash {
            host: Target::Host("n3".into()),
            restart: None,
            kill: false,
        }
    );
}

#[test]
fn sweeps() {
    let base = "duration = \"10s\"\n";
    let s = parse_str(&format!("{base}[sweep]\nseeds = 500\n"), "t.toml").unwrap();
    assert_eq!(
        s.sweep.unwrap(),
        Sweep {
            seeds: 1..=500,
            vary: vec![]
        }
    );
    let s = parse_str(
        &format!("{base}[sweep]\nseeds = \"1000..=1999\"\n"),
        "t.toml",
    )
    .unwrap();
    assert_eq!(s.sweep.unwrap().seeds, 1000..=1999);
    let s = parse_str(&format!("{base}[sweep]\n"), "t.toml").unwrap();
    assert_eq!(s.sweep.unwrap().seeds, 1..=100);
    error(
        &format!("{base}[sweep]\nseeds = \"1000..1999\"\n"),
        "sweep.seeds",
        Some(3),
        "..=",
    );
    error(
        &format!("{base}[sweep]\nseeds = 0\n"),
        "sweep.seeds",
        Some(3),
        "at least one",
    );
    error(
        &format!("{base}[sweep]\nseeds = \"9..=3\"\n"),
        "sweep.seeds",
        Some(3),
        "backwards",
    );

    let text = format!(
        "{base}[cluster]\ntopology = \"single\"\n[sweep]\nseeds = 5\n[sweep.vary]\n\"cluster.topology\" = [\"single\", \"redlock\"]\n\"cluster.restart\" = [\"immediate\", \"0.5ttl\", \"ttl\", \"1.5ttl\"]\nhosts.n2.clock_rate = [1.0, 1.05]\n"
    );
    let s = parse_str(&text, "t.toml").unwrap();
    let sweep = s.sweep.unwrap();
    let paths: Vec<&str> = sweep.vary.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        ["cluster.topology", "cluster.restart", "hosts.n2.clock_rate"]
    );
    let shown: Vec<String> = sweep.vary[1].1.iter().map(render_vary_value).collect();
    assert_eq!(shown, ["immediate", "0.5ttl", "ttl", "1.5ttl"]);
    let shown: Vec<String> = sweep.vary[2].1.iter().map(render_vary_value).collect();
    assert_eq!(shown, ["1.0", "1.05"]);
    assert_eq!(render_vary_value(&toml::Value::Boolean(true)), "true");
    assert_eq!(render_vary_value(&toml::Value::Integer(3)), "3");
    assert_eq!(sweep.cell_count(), 16);
    let first = sweep.cell(0).unwrap();
    assert_eq!(first[0], ("cluster.topology".to_string(), "single".into()));
    assert_eq!(first[1].1, "immediate".into());
    assert_eq!(sweep.cell(1).unwrap()[2].1, toml::Value::Float(1.05));
    assert_eq!(sweep.cell(15).unwrap()[0].1, "redlock".into());
    assert_eq!(sweep.cell(16), None);
    check_sweep(&text, "t.toml").unwrap();
    let s = parse_with_overrides(&text, "t.toml", &sweep.cell(3).unwrap()).unwrap();
    assert_eq!(s.cluster.restart, Restart::After(secs(5)));
    assert_eq!(s.hosts["n2"].clock_rate, Some(1.05));

    // A bad vary value is reported on its [sweep.vary] line.
    let bad =
        format!("{base}[sweep]\n[sweep.vary]\n\"cluster.restart\" = [\"immediate\", \"0.5tt\"]\n");
    let e = parse_str(&bad, "t.toml").unwrap_err();
    assert_eq!(
        (e.key.as_str(), e.line),
        ("cluster.restart", Some(4)),
        "{e}"
    );
    assert!(
        e.message
            .contains("sweep cell where cluster.restart = \"0.5tt\""),
        "{e}"
    );
    let bad = format!("{base}[sweep.vary]\n\"cluster.nodez\" = [1]\n");
    error(&bad, "cluster.nodez", Some(3), "did you mean `nodes`?");
    error(
        &format!("{base}[sweep.vary]\n\"cluster.nodes\" = 3\n"),
        "sweep.vary.\"cluster.nodes\"",
        Some(3),
        "list of values",
    );
    error(
        &format!("{base}[sweep.vary]\n\"cluster.nodes\" = []\n"),
        "sweep.vary.\"cluster.nodes\"",
        Some(3),
        "empty",
    );
}

#[test]
fn fuzz_never_panics() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5ce7a210);
    let (mut ok, mut bad) = (0, 0);
    for round in 0..600 {
        let base = if round % 2 == 0 { EXAMPLE } else { FULL };
        let text = mutate(base, &mut rng);
        match parse_str(&text, "fuzz.toml") {
            Ok(s) => {
                ok += 1;
                if let Some(sweep) = &s.sweep {
                    for i in 0..sweep.cell_count().min(4) {
                        let _ = parse_with_overrides(&text, "fuzz.toml", &sweep.cell(i).unwrap());
                    }
                }
            }
            Err(e) => {
                bad += 1;
                if round % 1000 == 1 {
                    eprintln!("{e}");
                }
                assert!(!e.message.is_empty());
                assert_eq!(e.file, "fuzz.toml");
                let _ = e.to_string();
            }
        }
    }
    assert!(ok > 20 && bad > 20, "ok {ok}, bad {bad}");
}

#[test]
fn documented_choices() {
    for (word, expect) in [
        ("safe", Expect::Safe),
        ("violation", Expect::Violation),
        ("degraded", Expect::Degraded),
    ] {
        let s = parse_str(
            &format!("duration = \"1s\"\nexpect = \"{word}\"\n"),
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.expect, expect);
        assert_eq!(expect.as_str(), word);
    }
    // Single-only keys are accepted (and ignored) with redlock, so that a sweep may vary the topology.
    let s = parse_str(
        "duration = \"1s\"\n[cluster]\nfailover_after = \"2s\"\nreplication_delay = \"5ms\"\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(s.cluster.failover_after, Some(secs(2)));
    error(
        "duration = \"1s\"\n[nemesis]\ncrash_target = \"master\"\n",
        "nemesis.crash_target",
        Some(3),
        "single",
    );
    error(
        "duration = \"1s\"\n[nemesis]\npause_every = \"0s\"\n",
        "nemesis.pause_every",
        Some(3),
        "more than zero",
    );
    error(
        "duration = \"1s\"\n[[faults]]\nat = \"0s\"\ndo = \"partition\"\nsides = [[\"c1\"], [\"n1\"], [\"n2\"]]\noneway = true\n",
        "faults[0].sides",
        Some(5),
        "exactly two sides",
    );
}

#[test]
fn lock_and_reentry() {
    // Defaults: the SET NX lock, no re-entry.
    let s = parse_str("duration = \"1s\"\n", "t.toml").unwrap();
    assert_eq!(s.clients[0].lock, LockKind::SetNx);
    assert_eq!(s.clients[0].reentry, 0);
    // The reentrant lock with re-entries, one client overriding.
    let s = parse_str(
        "duration = \"1s\"\n[clients]\nlock = \"reentrant\"\nreentry = 2\n[hosts.c2]\nreentry = 0\n",
        "t.toml",
    )
    .unwrap();
    assert_eq!(s.clients[0].lock, LockKind::Reentrant);
    assert_eq!(s.clients[0].reentry, 2);
    assert_eq!(s.clients[1].lock, LockKind::Reentrant);
    assert_eq!(s.clients[1].reentry, 0);
    for k in LockKind::ALL {
        let text = format!("duration = \"1s\"\n[clients]\nlock = \"{}\"\n", k.as_str());
        assert_eq!(parse_str(&text, "t.toml").unwrap().clients[0].lock, k);
    }
    // A typo gets a suggestion.
    error(
        "duration = \"1s\"\n[clients]\nlock = \"reentrent\"\n",
        "clients.lock",
        Some(3),
        "did you mean \"reentrant\"?",
    );
    error(
        "duration = \"1s\"\n[clients]\nreentry = -1\n",
        "clients.reentry",
        Some(3),
        "",
    );
    error(
        "duration = \"1s\"\n[clients]\nreentry = \"2\"\n",
        "clients.reentry",
        Some(3),
        "integer",
    );
}

#[test]
fn reentry_needs_the_reentrant_lock() {
    // With the default lock.
    error(
        "duration = \"1s\"\n[clients]\nreentry = 2\n",
        "clients.reentry",
        Some(3),
        "reentry = 2 needs lock = \"reentrant\"",
    );
    // Set in [hosts.c2], the lock set-nx for c2 only: the error points there.
    error(
        "duration = \"1s\"\n[clients]\nlock = \"reentrant\"\n[hosts.c2]\nlock = \"set-nx\"\nreentry = 1\n",
        "hosts.c2.reentry",
        Some(6),
        "c2 takes the set-nx lock",
    );
    // [clients] re-entry, but c1 is switched back to set-nx: points at [clients].
    error(
        "duration = \"1s\"\n[clients]\nlock = \"reentrant\"\nreentry = 3\n[hosts.c1]\nlock = \"set-nx\"\n",
        "clients.reentry",
        Some(4),
        "needs lock = \"reentrant\"",
    );
    // reentry = 0 is fine with either lock.
    parse_str("duration = \"1s\"\n[clients]\nreentry = 0\n", "t.toml").unwrap();
}

#[test]
fn set_nx_flaws_do_not_combine_with_the_reentrant_lock() {
    for v in ["extend-resurrects", "plain-del-release", "legacy-setnx"] {
        let text =
            format!("duration = \"1s\"\n[clients]\nlock = \"reentrant\"\nvariant = \"{v}\"\n");
        error(
            &text,
            "clients.variant",
            Some(4),
            &format!("variant \"{v}\" does not combine with lock = \"reentrant\""),
        );
    }
    // The lock set per host, the variant for all: points at the variant.
    error(
        "duration = \"1s\"\n[clients]\nvariant = \"legacy-setnx\"\n[hosts.c2]\nlock = \"reentrant\"\n",
        "clients.variant",
        Some(3),
        "(c2)",
    );
    // The flaws of validity, quorum and timing do combine.
    for v in [
        "spec",
        "no-validity-check",
        "wall-clock-elapsed",
        "no-drift-allowance",
        "unsigned-validity",
        "no-release-on-failure",
        "sequential",
        "majority-of-responders",
    ] {
        let text = format!(
            "duration = \"1s\"\n[clients]\nlock = \"reentrant\"\nreentry = 1\nvariant = \"{v}\"\n"
        );
        let s = parse_str(&text, "t.toml").unwrap();
        assert_eq!(s.clients[0].variant.as_str(), v);
    }
}

#[test]
fn key_line_finds_keys_in_tables_and_arrays_of_tables() {
    let text = "name = \"x\"\n\n[clients]\nttl = \"1s\"\n\n[[faults]]\nat = \"1s\"\ndo = \"heal\"\n\n[[faults]]\nat = \"2s\"\ndo = \"crash\"\nhost = \"n1\"\n";
    assert_eq!(key_line(text, "name"), Some(1));
    assert_eq!(key_line(text, "clients.ttl"), Some(4));
    assert_eq!(key_line(text, "faults[0].do"), Some(8));
    assert_eq!(key_line(text, "faults[1].host"), Some(13));
    assert_eq!(key_line(text, "faults[1]"), Some(10));
    assert_eq!(key_line(text, "faults[0].host"), None);
    assert_eq!(key_line(text, "faults[2].at"), None);
    assert_eq!(key_line(text, "clients[0].ttl"), None);
    assert_eq!(key_line(text, "faults[x].at"), None);
}

/// The shipped matrix files parse as matrices, every library's scenario
/// with them (`matrix` reads them all before it runs a cell).
#[test]
fn the_shipped_matrix_files_parse() {
    for file in [
        "scenarios/libraries/matrix.toml",
        "scenarios/libraries/bugs.toml",
        "scenarios/libraries/load.toml",
    ] {
        let text = std::fs::read_to_string(file).unwrap();
        let m = redlock_harness::scenario::matrix::parse(&text, file)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!m.libraries.is_empty() && !m.faults.is_empty(), "{file}");
    }
}

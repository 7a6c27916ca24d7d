//! The client's connection to the store is opened when the client starts
//! and kept (`[clients]` in the scenario format): the first write leaves at
//! once, a write whose connection never opened is `write_abandoned`, never
//! sent. And every stale write says how it got late.

use redlock_harness::check::{check, CheckResult, StaleKind};
use redlock_harness::history::{Event, EventKind, History};
use redlock_harness::scenario;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

fn run(file: &str, seed: u64) -> (History, CheckResult) {
    let s = scenario::load(Path::new(file)).unwrap();
    let h = redlock_harness::sim::run(&s, seed).unwrap();
    let c = check(&h);
    (h, c)
}

/// The events of `client`'s acquisition `acq` that concern its write `seq`.
fn write_events<'h>(h: &'h History, client: &str, acq: u64, seq: u32) -> Vec<&'h Event> {
    h.events
        .iter()
        .filter(|e| match &e.kind {
            EventKind::WriteSent { acq: a, seq: s }
            | EventKind::WriteAbandoned { acq: a, seq: s } => {
                e.host == client && (*a, *s) == (acq, seq)
            }
            EventKind::WriteApplied {
                client: c,
                acq: a,
                seq: s,
                ..
            } => c == client && (*a, *s) == (acq, seq),
            _ => false,
        })
        .collect()
}

#[test]
fn a_write_whose_connection_never_opened_is_abandoned_not_sent() {
    let (h, c) = run("scenarios/abandoned_write.toml", 1);
    let events = write_events(&h, "c1", 1, 1);
    let names: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(names, ["write_abandoned"], "{events:?}");
    // Given up when c1's lock ran out, nothing of it applied, ever.
    let given_up = events[0].time;
    let hold = c
        .holds
        .iter()
        .find(|h| h.client == "c1" && h.acq == 1)
        .unwrap();
    assert_eq!(given_up, hold.end, "{hold:?}");
    assert!(c.stale_writes.is_empty(), "{:?}", c.stale_writes);
    // Its next connection opened at the heal (5 s): c1's later writes land.
    let later = h
        .events
        .iter()
        .find(|e| matches!(&e.kind, EventKind::WriteApplied { client, .. } if client == "c1"));
    let later = later.expect("c1 writes once the link healed");
    assert!(later.time.as_secs_f64() >= 5.0, "{later:?}");
}

#[test]
fn the_first_write_leaves_at_once_on_the_connection_opened_at_start() {
    let (h, c) = run("scenarios/first_write_on_the_wire.toml", 1);
    let acquired = h
        .events
        .iter()
        .find(|e| e.host == "c1" && matches!(e.kind, EventKind::Acquired { acq: 1, .. }))
        .unwrap();
    let events = write_events(&h, "c1", 1, 1);
    let names: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(names, ["write_sent", "write_applied"], "{events:?}");
    assert_eq!(
        events[0].time, acquired.time,
        "sent the instant c1 acquired"
    );
    // The slowed link carries it 4 s: it lands after c2 acquired.
    let hop = events[1].time - events[0].time;
    assert!(hop.as_millis() >= 4000, "{hop:?}");
    let stale: Vec<_> = c
        .stale_writes
        .iter()
        .filter(|w| w.writer.0 == "c1")
        .collect();
    assert_eq!(stale.len(), 1, "{:?}", c.stale_writes);
    assert_eq!(stale[0].kind, StaleKind::InFlight);
    assert_eq!(stale[0].sent, Some(events[0].time));
}

#[test]
fn stale_writes_of_partitions_are_in_flight_and_of_a_pause_sent_late() {
    let cases = [
        ("scenarios/partitions_only.toml", StaleKind::InFlight),
        ("scenarios/partition_held_write.toml", StaleKind::InFlight),
        ("scenarios/slow_link_stale_write.toml", StaleKind::InFlight),
        ("scenarios/gc_pause.toml", StaleKind::SentLate),
        ("scenarios/gc_pause_one_write.toml", StaleKind::SentLate),
        ("scenarios/failover_race.toml", StaleKind::InOverlap),
        (
            "scenarios/crash_restart_immediate.toml",
            StaleKind::InOverlap,
        ),
    ];
    for (file, kind) in cases {
        let mut stale = 0;
        for seed in 1..=3 {
            let (_, c) = run(file, seed);
            let kinds: Vec<StaleKind> = c.stale_writes.iter().map(|w| w.kind).collect();
            assert!(
                kinds.iter().all(|k| *k == kind),
                "{file} seed {seed}: {kinds:?}"
            );
            let split = c.stale_split();
            assert_eq!(split.iter().sum::<u64>(), c.stale_writes.len() as u64);
            stale += kinds.len();
        }
        assert!(stale >= 3, "{file}: {stale} stale writes in seeds 1-3");
    }
}

#[test]
fn run_prints_and_writes_the_split_and_the_abandoned_writes() {
    let out = crate::common::Scratch::fresh("sim-abandon");
    let o = Command::new(BIN)
        .args(["run", "scenarios/gc_pause.toml", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    for line in [
        "stale_writes: 1",
        "stale_in_flight: 0",
        "stale_sent_late: 1",
        "stale_in_overlap: 0",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "no {line:?} in:\n{stdout}"
        );
    }
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["stale_sent_late"], 1);
    assert_eq!(v["abandoned_writes"], 0);
    assert_eq!(v["violations"][0]["how"], "stale_sent_late", "{json}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("**sent late**"), "{report}");

    let o = Command::new(BIN)
        .args(["run", "scenarios/abandoned_write.toml", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let history = std::fs::read_to_string(out.join("history.csv")).unwrap();
    assert!(
        history.contains(",c1,write_abandoned,acq=1 seq=1"),
        "{history}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Writes abandoned"), "{report}");
    assert!(report.contains("| c1 | #1 | 1 |"), "{report}");
    let svg = std::fs::read_to_string(out.join("timeline.svg")).unwrap();
    assert!(svg.contains("write abandoned (never sent)"));
    std::fs::remove_dir_all(&out).unwrap();
}

//! The checkers on hand-written histories, and the run report on a tiny one.

use std::path::PathBuf;
use std::time::Duration;

use redlock_harness::check::{check, HoldEnd, Verdict};
use redlock_harness::history::keys::Shape;
use redlock_harness::history::{Event, EventKind, FaultEvent, History};
use redlock_harness::scenario::Restart;
use redlock_report::{summary_lines, write_run, RunOutput};

fn at(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn ev(ms: u64, host: &str, kind: EventKind) -> Event {
    Event {
        time: at(ms),
        host: host.to_string(),
        kind,
    }
}

fn call(ms: u64, host: &str, call: u64) -> Event {
    ev(
        ms,
        host,
        EventKind::LockCall {
            call,
            resource: "lock".into(),
        },
    )
}

fn acquired(ms: u64, host: &str, acq: u64, valid_until_ms: u64) -> Event {
    acquired_on(ms, host, acq, valid_until_ms, "lock", None)
}

fn acquired_on(
    ms: u64,
    host: &str,
    acq: u64,
    valid_until_ms: u64,
    resource: &str,
    fence: Option<u64>,
) -> Event {
    ev(
        ms,
        host,
        EventKind::Acquired {
            acq,
            resource: resource.into(),
            token: format!("{host}-tok{acq}"),
            validity: at(valid_until_ms.saturating_sub(ms)),
            valid_until: at(valid_until_ms),
            nodes: 3,
            fence,
        },
    )
}

fn failed(ms: u64, host: &str, call: u64) -> Event {
    ev(
        ms,
        host,
        EventKind::LockFailed {
            call,
            reason: "no-quorum".into(),
        },
    )
}

fn release(ms: u64, host: &str, acq: u64) -> Event {
    ev(ms, host, EventKind::ReleaseStart { acq })
}

fn applied(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    applied_on(ms, client, acq, seq, "lock", None)
}

fn applied_on(
    ms: u64,
    client: &str,
    acq: u64,
    seq: u32,
    resource: &str,
    fence: Option<u64>,
) -> Event {
    ev(
        ms,
        "store",
        EventKind::WriteApplied {
            client: client.into(),
            acq,
            seq,
            fence,
            resource: resource.into(),
        },
    )
}

fn rejected(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    ev(
        ms,
        "store",
        EventKind::WriteRejected {
            client: client.into(),
            acq,
            seq,
            fence: 1,
            highest: 2,
            resource: "lock".into(),
        },
    )
}

fn end(ms: u64) -> Event {
    ev(ms, "sim", EventKind::End)
}

fn history(events: Vec<Event>) -> History {
    History { events }
}

#[test]
fn touching_holds_are_not_an_overlap() {
    let h = history(vec![
        acquired(0, "c1", 1, 10_000),
        release(1000, "c1", 1),
        acquired(1000, "c2", 1, 11_000),
        release(2000, "c2", 1),
        end(3000),
    ]);
    let r = check(&h);
    assert_eq!(r.holds.len(), 2);
    assert_eq!(r.holds[0].end, at(1000));
    assert_eq!(r.holds[1].start, at(1000));
    assert!(r.overlaps.is_empty());
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(r.verdict.as_str(), "safe");
}

#[test]
fn a_one_ms_overlap_is_a_violation() {
    let h = history(vec![
        acquired(0, "c1", 1, 10_000),
        acquired(1000, "c2", 1, 11_000),
        release(1001, "c1", 1),
        release(2000, "c2", 1),
        end(3000),
    ]);
    let r = check(&h);
    assert_eq!(r.overlaps.len(), 1);
    let o = &r.overlaps[0];
    assert_eq!((o.a.client.as_str(), o.b.client.as_str()), ("c1", "c2"));
    assert_eq!((o.from, o.to), (at(1000), at(1001)));
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(r.verdict.as_str(), "violation");
}

#[test]
fn each_pair_counts_once_and_three_clients_give_three_pairs() {
    let h = history(vec![
        acquired(0, "c1", 1, 10_000),
        acquired(100, "c2", 1, 10_000),
        acquired(200, "c3", 1, 10_000),
        release(5000, "c1", 1),
        release(5000, "c2", 1),
        release(5000, "c3", 1),
    ]);
    let r = check(&h);
    let pairs: Vec<(&str, &str)> = r
        .overlaps
        .iter()
        .map(|o| (o.a.client.as_str(), o.b.client.as_str()))
        .collect();
    assert_eq!(pairs, vec![("c1", "c2"), ("c1", "c3"), ("c2", "c3")]);
}

#[test]
fn same_client_holds_never_count() {
    // c1's first hold is never released and is still valid when its second
    // acquisition starts: same client, so no violation.
    let h = history(vec![
        acquired(0, "c1", 1, 5000),
        acquired(1000, "c1", 2, 6000),
        release(2000, "c1", 2),
        end(3000),
    ]);
    let r = check(&h);
    assert_eq!(r.holds.len(), 2);
    assert!(r.overlaps.is_empty());
    assert_eq!(r.verdict, Verdict::Safe);
}

#[test]
fn release_start_or_validity_end_whichever_is_earlier() {
    // In time order, as the simulation records them (the checker panics
    // on anything else).
    let h = history(vec![
        // Validity ends (500) before the release starts (800).
        acquired(0, "c1", 1, 500),
        // c2 acquires after c1's validity ended but before its release.
        acquired(600, "c2", 1, 5000),
        release(800, "c1", 1),
        release(900, "c2", 1),
        // The release starts (1300) before the validity ends (1500).
        acquired(1000, "c1", 2, 1500),
        release(1300, "c1", 2),
        end(2000),
    ]);
    let r = check(&h);
    let h1 = r
        .holds
        .iter()
        .find(|h| h.client == "c1" && h.acq == 1)
        .unwrap();
    assert_eq!((h1.end, h1.end_reason), (at(500), HoldEnd::ValidityEnd));
    let h2 = r
        .holds
        .iter()
        .find(|h| h.client == "c1" && h.acq == 2)
        .unwrap();
    assert_eq!((h2.end, h2.end_reason), (at(1300), HoldEnd::Released));
    assert!(r.overlaps.is_empty(), "{:?}", r.overlaps);
}

#[test]
fn extension_moves_the_end() {
    let ext = |ms: u64, acq: u64, until: u64| {
        ev(
            ms,
            "c1",
            EventKind::Extended {
                acq,
                validity: at(until - ms),
                valid_until: at(until),
            },
        )
    };
    let h = history(vec![
        acquired(0, "c1", 1, 1000),
        ext(300, 1, 2000),
        ext(900, 1, 3000),
        acquired(2500, "c2", 1, 9000),
        release(4000, "c2", 1),
        end(5000),
    ]);
    let r = check(&h);
    let h1 = &r.holds[0];
    assert_eq!((h1.end, h1.end_reason), (at(3000), HoldEnd::ValidityEnd));
    assert_eq!(r.overlaps.len(), 1);
    assert_eq!((r.overlaps[0].from, r.overlaps[0].to), (at(2500), at(3000)));
}

#[test]
fn lost_and_run_end_end_holds() {
    let h = history(vec![
        acquired(0, "c1", 1, 1000),
        ev(
            400,
            "c1",
            EventKind::Lost {
                acq: 1,
                reason: "extend-failed".into(),
            },
        ),
        release(450, "c1", 1),
        acquired(500, "c2", 1, 10_000),
        ev(600, "c2", EventKind::ValidityExpired { acq: 1 }),
        acquired(650, "c1", 2, 10_000),
        end(700),
    ]);
    let r = check(&h);
    let ends: Vec<(Duration, HoldEnd)> = r.holds.iter().map(|h| (h.end, h.end_reason)).collect();
    assert_eq!(
        ends,
        vec![
            (at(400), HoldEnd::Lost),
            (at(600), HoldEnd::Lost),
            (at(700), HoldEnd::RunEnd)
        ]
    );
    assert!(r.overlaps.is_empty());
}

#[test]
fn interleaving_a_b_a_counted_once() {
    let h = history(vec![
        applied(10, "c1", 1, 0),
        applied(20, "c2", 1, 0),
        applied(30, "c1", 1, 1),
        applied(40, "c2", 1, 1),
        applied(50, "c1", 1, 2),
    ]);
    let r = check(&h);
    assert_eq!(r.interleavings.len(), 1);
    let i = &r.interleavings[0];
    assert_eq!(i.first, ("c1".to_string(), 1));
    assert_eq!(i.second, ("c2".to_string(), 1));
    assert_eq!(i.times, [at(10), at(20), at(30)]);
    assert_eq!(i.seqs, [0, 0, 1]);
    assert_eq!(r.verdict, Verdict::Violation);
}

#[test]
fn a_a_b_b_is_not_an_interleaving() {
    let h = history(vec![
        applied(10, "c1", 1, 0),
        applied(20, "c1", 1, 1),
        applied(30, "c2", 1, 0),
        applied(40, "c2", 1, 1),
        // The same client's next acquisition between writes of its first
        // does not count either.
        applied(50, "c1", 2, 0),
        applied(60, "c1", 3, 0),
        applied(70, "c1", 2, 1),
    ]);
    let r = check(&h);
    assert!(r.interleavings.is_empty(), "{:?}", r.interleavings);
    assert_eq!(r.verdict, Verdict::Safe);
}

#[test]
fn rejected_writes_are_counted_apart_and_do_not_interleave() {
    let h = history(vec![
        applied(10, "c1", 1, 0),
        rejected(20, "c2", 1, 0),
        applied(30, "c1", 1, 1),
        rejected(40, "c2", 1, 1),
    ]);
    let r = check(&h);
    assert_eq!(r.rejected_writes, 2);
    assert!(r.interleavings.is_empty());
    assert_eq!(r.verdict, Verdict::Safe);
}

#[test]
fn liveness_by_hand() {
    let h = history(vec![
        call(0, "c1", 1),
        call(2, "c3", 1),
        failed(8, "c3", 1),
        acquired(10, "c1", 1, 5000),
        call(50, "c2", 1),
        failed(80, "c2", 1),
        release(100, "c1", 1),
        call(150, "c2", 2),
        acquired(190, "c2", 1, 5000),
        release(300, "c2", 1),
        call(400, "c1", 2),
        failed(450, "c1", 2),
    ]);
    let l = check(&h).liveness;
    assert_eq!(l.attempts, 5);
    assert_eq!(l.acquisitions, 2);
    // Latencies 10 and 40 ms: nearest rank 1 of 2 for p50, 2 of 2 for p99.
    assert_eq!(l.acquire_p50_ms, 10.0);
    assert_eq!(l.acquire_p99_ms, 40.0);
    // Waiting with nobody holding: 0..10 (c1 and c3 together count once),
    // 150..190, 400..450; 50..80 does not count (c1 held the lock).
    assert!(
        (l.unavailable_ms - 100.0).abs() < 1e-9,
        "{}",
        l.unavailable_ms
    );
}

#[test]
fn empty_history_is_safe_with_zero_figures() {
    let r = check(&History::default());
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(r.liveness.attempts, 0);
    assert_eq!(r.liveness.acquire_p50_ms, 0.0);
    assert_eq!(r.liveness.unavailable_ms, 0.0);
}

#[test]
fn large_history_is_fast() {
    // 100k events: 20k acquisitions alternating between two clients.
    let mut events = Vec::new();
    let mut t = 0;
    for k in 0..20_000u64 {
        let c = if k % 2 == 0 { "c1" } else { "c2" };
        let acq = k / 2 + 1;
        events.push(call(t, c, acq));
        events.push(acquired(t + 1, c, acq, t + 100));
        events.push(applied(t + 2, c, acq, 0));
        events.push(applied(t + 3, c, acq, 1));
        events.push(release(t + 4, c, acq));
        t += 5;
    }
    let start = std::time::Instant::now();
    let r = check(&history(events));
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(r.holds.len(), 20_000);
    assert!(start.elapsed() < Duration::from_secs(2));
}

// ---------------------------------------------------------------------------
// The run report.

const SCENARIO: &str = r#"
name = "tiny-overlap"
description = "Three masters; n2 crashes and comes back empty while c1 holds, so c2 <locks> n1+n2 & both hold."
duration = "6s"
expect = "violation"

[cluster]
topology = "redlock"
nodes = 3

[clients]
count = 2
ttl = "10s"
"#;

fn key_set(ms: u64, node: &str, token: &str) -> Event {
    ev(
        ms,
        node,
        EventKind::KeySet {
            key: "lock".into(),
            shape: Shape::String,
            token: token.into(),
            expires_at: Some(ms as i64 + 10_000),
            by: None,
        },
    )
}

fn fault(ms: u64, fault: FaultEvent) -> Event {
    ev(ms, "sim", EventKind::Fault(fault))
}

fn tiny_history() -> History {
    let up = |ms, n: &str| ev(ms, n, EventKind::NodeUp { keys: 0 });
    history(vec![
        up(0, "n1"),
        up(0, "n2"),
        up(0, "n3"),
        fault(
            0,
            FaultEvent::Partition {
                sides: vec![vec!["c1".into()], vec!["n1".into()]],
                oneway: false,
                for_ms: Some(2000),
            },
        ),
        call(100, "c1", 1),
        key_set(103, "n2", "c1-tok1"),
        key_set(104, "n3", "c1-tok1"),
        acquired(110, "c1", 1, 9_900),
        applied(115, "c1", 1, 0),
        fault(
            1110,
            FaultEvent::Crash {
                host: "n2".into(),
                restart: Restart::Immediate,
                kill: false,
            },
        ),
        up(1110, "n2"),
        fault(
            1500,
            FaultEvent::Pause {
                host: "c1".into(),
                for_ms: 2500,
            },
        ),
        fault(
            1600,
            FaultEvent::ClockJump {
                host: "n3".into(),
                by_ms: 8000.0,
            },
        ),
        call(3000, "c2", 1),
        key_set(3002, "n1", "c2-tok1"),
        key_set(3003, "n2", "c2-tok1"),
        acquired(3010, "c2", 1, 12_800),
        applied(3015, "c2", 1, 0),
        applied(4020, "c1", 1, 1),
        release(4030, "c1", 1),
        ev(
            4035,
            "n3",
            EventKind::KeyRemoved {
                key: "lock".into(),
                mark: None,
                by: None,
            },
        ),
        ev(4040, "c1", EventKind::Released { acq: 1, nodes: 1 }),
        applied(5000, "c2", 1, 1),
        release(5010, "c2", 1),
        ev(
            5012,
            "n1",
            EventKind::KeyRemoved {
                key: "lock".into(),
                mark: None,
                by: None,
            },
        ),
        ev(
            5013,
            "n2",
            EventKind::KeyRemoved {
                key: "lock".into(),
                mark: None,
                by: None,
            },
        ),
        ev(5020, "c2", EventKind::Released { acq: 1, nodes: 2 }),
        end(6000),
    ])
}

fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("check-report-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn run_report_with_one_overlap() {
    let scenario = redlock_harness::scenario::parse_str(SCENARIO, "tiny-overlap.toml").unwrap();
    let hist = tiny_history();
    let result = check(&hist);
    assert_eq!(result.overlaps.len(), 1);
    assert_eq!(result.interleavings.len(), 1);
    let out = RunOutput {
        scenario: &scenario,
        seed: 7,
        history: &hist,
        check: &result,
        trace: hist.trace(),
        wall_ms: 1.5,
        sets: &[],
        lab: None,
    };
    let dir = out_dir("overlap");
    write_run(&dir, &out).unwrap();
    for f in [
        "history.csv",
        "summary.json",
        "report.md",
        "index.html",
        "timeline.svg",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }

    let csv = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "time_ms,host,event,detail");
    assert_eq!(lines.len(), 1 + hist.events.len());
    assert!(lines.contains(&"110.000,c1,acquired,acq=1 resource=lock token=c1-tok1 validity_ms=9790.000 valid_until_ms=9900.000 nodes=3 fence=-"));

    let svg = std::fs::read_to_string(dir.join("timeline.svg")).unwrap();
    assert!(
        svg.trim_start().starts_with("<svg"),
        "{}",
        &svg[..80.min(svg.len())]
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("\nc1\n</text>") && svg.contains("\nn3\n</text>"));

    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("c1") && md.contains("c2"));
    // The overlap: c2 acquired at 3.010 s, c1 started releasing at 4.030 s.
    assert!(md.contains("From 3.010 s to 4.030 s both held it"), "{md}");
    assert!(md.contains("n2 crashed"));
    assert!(md.contains("Verdict: violation"));

    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // The page shows the timeline from its file, not from a second copy.
    assert!(html.contains("<img src=\"timeline.svg\""), "{html}");
    assert!(!html.contains("<svg"));
    assert!(html.contains("c2 &lt;locks&gt; n1+n2 &amp; both hold"));
    assert!(!html.contains("<locks>"));

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["verdict"], "violation");
    assert_eq!(json["expected"], "violation");
    assert_eq!(json["lock_overlaps"], 1);
    assert_eq!(json["write_interleavings"], 1);
    assert_eq!(json["events"], hist.events.len());
    assert_eq!(json["violations"][0]["from_ms"], 3010.0);
    assert_eq!(json["violations"][0]["to_ms"], 4030.0);

    let lines = summary_lines(&out);
    for key in [
        "verdict: violation\n",
        "expected: violation\n",
        "lock_overlaps: 1\n",
        "write_interleavings: 1\n",
    ] {
        assert!(lines.contains(key), "{lines}");
    }
    assert!(lines.contains(&format!("trace: {}\n", hist.trace())));
}

#[test]
fn run_report_on_empty_history_and_no_clients() {
    let scenario = redlock_harness::scenario::parse_str(SCENARIO, "tiny-overlap.toml").unwrap();
    for (name, hist) in [
        ("empty", History::default()),
        (
            "odd",
            history(vec![
                fault(
                    0,
                    FaultEvent::Crash {
                        host: String::new(),
                        restart: Restart::Never,
                        kill: false,
                    },
                ),
                fault(
                    5,
                    FaultEvent::Partition {
                        sides: vec![],
                        oneway: true,
                        for_ms: None,
                    },
                ),
                fault(
                    6,
                    FaultEvent::Pause {
                        host: "zz".into(),
                        for_ms: u64::MAX,
                    },
                ),
                fault(7, FaultEvent::Heal),
                fault(
                    8,
                    FaultEvent::ClockJump {
                        host: "c9".into(),
                        by_ms: f64::NAN,
                    },
                ),
                fault(
                    8,
                    FaultEvent::ClockRate {
                        host: "c9".into(),
                        rate: 0.0,
                        from: f64::INFINITY,
                    },
                ),
                ev(
                    9,
                    "n9",
                    EventKind::KeyRemoved {
                        key: "x".into(),
                        mark: None,
                        by: None,
                    },
                ),
            ]),
        ),
    ] {
        let result = check(&hist);
        let out = RunOutput {
            scenario: &scenario,
            seed: 1,
            history: &hist,
            check: &result,
            trace: hist.trace(),
            wall_ms: 0.0,
            sets: &[],
            lab: None,
        };
        let dir = out_dir(name);
        write_run(&dir, &out).unwrap();
        let svg = std::fs::read_to_string(dir.join("timeline.svg")).unwrap();
        assert!(svg.starts_with("<svg"));
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("No violation"));
        let csv = std::fs::read_to_string(dir.join("history.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + hist.events.len());
    }
}

#[test]
fn a_clock_rate_change_mid_hold_moves_the_end_of_validity() {
    let rate = |ms: u64, rate: f64, from: f64| {
        ev(
            ms,
            "driver",
            EventKind::Fault(FaultEvent::ClockRate {
                host: "c1".into(),
                rate,
                from,
            }),
        )
    };
    // c1's validity ends at 10 s at rate 1; at 2 s its clock slows to half
    // speed, so its own clock reaches the end at 2 + 8 × 2 = 18 s.
    let h = history(vec![
        acquired(0, "c1", 1, 10_000),
        rate(2_000, 0.5, 1.0),
        acquired(12_000, "c2", 1, 20_000),
        release(25_000, "c1", 1),
        release(26_000, "c2", 1),
        end(30_000),
    ]);
    let r = check(&h);
    assert_eq!(r.overlaps.len(), 1, "{:?}", r.holds);
    assert_eq!(r.holds[0].end, at(18_000));
    assert_eq!(r.holds[0].end_reason, HoldEnd::ValidityEnd);
    // Another client's clock change moves nothing of c1's.
    let mut other = h.clone();
    other.events[1] = ev(
        2_000,
        "driver",
        EventKind::Fault(FaultEvent::ClockRate {
            host: "c2".into(),
            rate: 0.5,
            from: 1.0,
        }),
    );
    assert_eq!(check(&other).holds[0].end, at(10_000));
}

fn sent(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    ev(ms, client, EventKind::WriteSent { acq, seq })
}

/// Kleppmann's pause with one write per acquisition: c1's only write lands
/// after c2 acquired, before c2 wrote anything.
#[test]
fn a_single_stale_write_after_a_later_acquisition_is_a_violation() {
    let h = history(vec![
        acquired(0, "c1", 1, 1_000),
        sent(1, "c1", 1, 1),
        acquired(2_000, "c2", 1, 12_000),
        applied(2_500, "c1", 1, 1),
        release(3_000, "c2", 1),
        end(4_000),
    ]);
    let r = check(&h);
    assert!(r.overlaps.is_empty());
    assert!(r.interleavings.is_empty());
    assert_eq!(r.stale_writes.len(), 1);
    let w = &r.stale_writes[0];
    assert_eq!(w.writer, ("c1".to_string(), 1));
    assert_eq!(w.landed_in, ("c2".to_string(), 1));
    assert_eq!(w.resource, "lock");
    assert_eq!(
        (w.sent, w.applied, w.acquired),
        (Some(at(1)), at(2_500), at(0))
    );
    assert_eq!(w.landed_in_start, at(2_000));
    assert_eq!(r.verdict, Verdict::Violation);
}

/// The same with the later holder's write first: B, A is no interleaving,
/// but A's write is still stale.
#[test]
fn a_stale_write_after_the_later_holders_write_is_a_violation() {
    let h = history(vec![
        acquired(0, "c1", 1, 1_000),
        acquired(2_000, "c2", 1, 12_000),
        applied(2_001, "c2", 1, 1),
        applied(2_500, "c1", 1, 1),
        end(4_000),
    ]);
    let r = check(&h);
    assert!(r.interleavings.is_empty());
    assert_eq!(r.stale_writes.len(), 1);
    assert_eq!(r.stale_writes[0].writer, ("c1".to_string(), 1));
    assert_eq!(r.verdict, Verdict::Violation);
}

/// Every interleaving also has a stale write.
#[test]
fn an_interleaving_comes_with_a_stale_write() {
    let h = history(vec![
        acquired(0, "c1", 1, 1_000),
        applied(1, "c1", 1, 1),
        acquired(2_000, "c2", 1, 12_000),
        applied(2_001, "c2", 1, 1),
        applied(2_500, "c1", 1, 2),
        end(4_000),
    ]);
    let r = check(&h);
    assert_eq!(r.interleavings.len(), 1);
    assert_eq!(r.stale_writes.len(), 1);
    assert_eq!(r.stale_writes[0].seq, 2);
}

/// A write the store refused by fencing was never applied: never stale.
#[test]
fn a_write_refused_by_fencing_is_never_stale() {
    let h = history(vec![
        acquired_on(0, "c1", 1, 1_000, "lock", Some(1)),
        acquired_on(2_000, "c2", 1, 12_000, "lock", Some(2)),
        applied_on(2_001, "c2", 1, 1, "lock", Some(2)),
        rejected(2_500, "c1", 1, 1),
        end(4_000),
    ]);
    let r = check(&h);
    assert!(r.stale_writes.is_empty());
    assert_eq!(r.rejected_writes, 1);
    assert_eq!(r.verdict, Verdict::Safe);
}

/// Mutual exclusion is per resource: holds and writes of two locks that
/// overlap in time are no violation; the same on one lock is.
#[test]
fn two_resources_overlapping_in_time_are_no_violation() {
    let events = |second: &str| {
        history(vec![
            acquired_on(0, "c1", 1, 10_000, "alpha", None),
            applied_on(1, "c1", 1, 1, "alpha", None),
            acquired_on(100, "c2", 1, 10_100, second, None),
            applied_on(101, "c2", 1, 1, second, None),
            applied_on(200, "c1", 1, 2, "alpha", None),
            release(300, "c1", 1),
            release(400, "c2", 1),
            end(500),
        ])
    };
    let r = check(&events("beta"));
    assert!(r.overlaps.is_empty() && r.stale_writes.is_empty() && r.interleavings.is_empty());
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(r.holds[1].resource, "beta");
    let same = check(&events("alpha"));
    assert_eq!(same.overlaps.len(), 1);
    assert_eq!(same.interleavings.len(), 1);
    assert_eq!(same.overlaps[0].a.resource, "alpha");
    assert_eq!(same.verdict, Verdict::Violation);
}

/// A write applied at the very instant of a later acquisition is stale,
/// whichever of the two was recorded first: the nodes gave the lock to the
/// later holder at least one hop before its client learned it. A write
/// applied a moment before is not.
#[test]
fn a_write_at_the_instant_of_a_later_acquisition_is_stale() {
    let write_first = history(vec![
        acquired(0, "c1", 1, 1_000),
        applied(2_000, "c1", 1, 1),
        acquired(2_000, "c2", 1, 12_000),
        end(3_000),
    ]);
    let acq_first = history(vec![
        acquired(0, "c1", 1, 1_000),
        acquired(2_000, "c2", 1, 12_000),
        applied(2_000, "c1", 1, 1),
        end(3_000),
    ]);
    for h in [write_first, acq_first] {
        let r = check(&h);
        assert_eq!(r.stale_writes.len(), 1, "{:?}", h.events);
        assert_eq!(r.stale_writes[0].landed_in_start, at(2_000));
    }
    let before = history(vec![
        acquired(0, "c1", 1, 1_000),
        applied(1_999, "c1", 1, 1),
        acquired(2_000, "c2", 1, 12_000),
        end(3_000),
    ]);
    assert!(check(&before).stale_writes.is_empty());
}

/// The client's own later acquisition makes its earlier write stale too:
/// the write leaked from one critical section into the next.
#[test]
fn a_write_landing_in_the_same_clients_next_acquisition_is_stale() {
    let h = history(vec![
        acquired(0, "c1", 1, 1_000),
        release(900, "c1", 1),
        acquired(2_000, "c1", 2, 12_000),
        applied(2_100, "c1", 1, 1),
        end(3_000),
    ]);
    let r = check(&h);
    assert_eq!(r.stale_writes.len(), 1);
    assert_eq!(r.stale_writes[0].landed_in, ("c1".to_string(), 2));
    assert!(r.overlaps.is_empty() && r.interleavings.is_empty());
}

/// The simulation records events in time order; one out of order is a
/// harness bug, and the checker panics (exit 70) instead of judging it.
#[test]
#[should_panic(expected = "out of time order")]
fn an_event_out_of_time_order_is_a_bug_not_a_verdict() {
    check(&history(vec![
        call(100, "c1", 1),
        acquired(200, "c1", 1, 10_000),
        call(150, "c2", 1),
        end(1000),
    ]));
}

/// Acquisition ids are the client's count of its acquisitions: the same
/// one twice is a harness bug, never the first kept and a verdict given.
#[test]
#[should_panic(expected = "acquired twice")]
fn an_acquisition_id_seen_twice_is_a_bug_not_a_verdict() {
    check(&history(vec![
        call(100, "c1", 1),
        acquired(200, "c1", 1, 10_000),
        release(300, "c1", 1),
        call(400, "c1", 2),
        acquired(500, "c1", 1, 10_000),
        end(1000),
    ]));
}

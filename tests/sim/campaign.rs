//! The random variants campaign (`scenarios/variants/campaign.toml`, no
//! hand-placed faults) against its committed report
//! (`reports/variants-campaign/runs.csv`):
//!
//! - the committed runs are the whole sweep the file describes: every
//!   variant, every seed, once;
//! - every unsafe variant is caught: some seed where it violated while the
//!   spec client, at the same seed, was safe (`sweep::baseline`, as the
//!   report computes it); majority-of-responders, whose flaw needs nodes
//!   that fail fast, through the nemesis's kills (a partition holds its
//!   requests, as TCP does, past the validity; a test below replays its
//!   catch, and shows it caught at once when requests time out fast);
//! - the spec client and the two liveness-only variants violated only
//!   through a client paused across the end of its hold whose write then
//!   landed late (Kleppmann's pause, which breaks any client without
//!   fencing): every such run is replayed and checked to be that;
//! - each variant's first catch, and the spec client at that seed, replay
//!   today exactly as committed (the whole row but `wall_ms`, trace
//!   included): the report is the code's.

use std::path::Path;
use std::time::Duration;

use redlock_harness::history::{EventKind, FaultEvent};
use redlock_harness::{runner, scenario};

use redlock_harness::sweep::{baseline, rows, Plan};

const FILE: &str = "scenarios/variants/campaign.toml";
const RUNS: &str = "reports/variants-campaign/runs.csv";

/// Variants whose flaw breaks mutual exclusion.
const UNSAFE: &[&str] = &[
    "no-validity-check",
    "extend-resurrects",
    "wall-clock-elapsed",
    "no-drift-allowance",
    "unsigned-validity",
    "plain-del-release",
    "legacy-setnx",
    "majority-of-responders",
];
/// Unsafe variants this campaign does not catch: none since it kills
/// nodes. (majority-of-responders counts a majority of the nodes that
/// answered: it needs the unreachable nodes to fail fast. Across a
/// partition, held as TCP holds it, its requests wait out the campaign's
/// 5 s request timeout, longer than the TTL, and the validity check then
/// refuses the lock; a killed node's connections reset at once.)
const HIDDEN: &[&str] = &[];
/// The spec client, and the variants whose flaw costs only liveness.
const SAFE: &[&str] = &["spec", "no-release-on-failure", "sequential"];

/// A row's fields without `wall_ms` (the only one that is not deterministic).
fn fields(r: &rows::RunRow) -> Vec<String> {
    r.replayable_fields()
}

#[test]
fn every_unsafe_variant_is_caught_where_spec_is_safe_and_replays_as_committed() {
    let plan = Plan::load(Path::new(FILE), None).unwrap();
    assert_eq!(plan.keys, vec![baseline::VARIANT_KEY.to_string()]);
    let committed = rows::read(Path::new(RUNS), &plan.keys).expect("the committed runs.csv");
    // The whole sweep, in run order, each run once.
    assert_eq!(committed.len(), plan.total_runs(), "rows in {RUNS}");
    for (i, r) in committed.iter().enumerate() {
        let (cell, seed) = plan.run_at(i);
        assert_eq!((&r.values, r.seed), (&plan.cells[cell].1, seed), "row {i}");
    }
    // The spec client and the liveness-only variants violated only through
    // a client paused across the end of its hold (Kleppmann's pause, which
    // breaks any client without fencing when it strikes there): each such
    // run is replayed and checked to be that.
    for &v in SAFE {
        for r in committed.iter().filter(|r| r.values[0] == v) {
            match r.verdict.as_str() {
                "safe" => {}
                "violation" => paused_writer_only(&plan, v, r.seed),
                other => panic!("{v} at seed {}: verdict {other}", r.seed),
            }
        }
    }
    // Where the run of `who` at `seed` is in run order.
    let at = |who: &str, seed: u64| {
        let cell = plan.cells.iter().position(|(_, shown)| shown[0] == who);
        cell.unwrap() * plan.seed_count() + (seed - plan.seeds.start()) as usize
    };
    let caught = baseline::against_spec(&plan.keys, &committed);
    let mut names: Vec<&str> = caught.iter().map(|c| c.values[0].as_str()).collect();
    let mut expected: Vec<&str> = UNSAFE.iter().chain(&SAFE[1..]).copied().collect();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected);
    for c in &caught {
        let v = c.values[0].as_str();
        assert_eq!(c.paired as usize, plan.seed_count(), "{v}");
        if !UNSAFE.contains(&v) {
            // Its "catches", if any, are the paused writers checked above.
            continue;
        }
        if HIDDEN.contains(&v) {
            assert!(
                c.seeds.is_empty(),
                "{v} caught at {:?}: update HIDDEN",
                c.seeds
            );
            continue;
        }
        let seed = *c
            .seeds
            .first()
            .unwrap_or_else(|| panic!("{v} was never caught in {RUNS}"));
        assert_eq!(c.needed, Some(seed - plan.seeds.start() + 1), "{v}");
        assert_eq!(committed[at(v, seed)].verdict, "violation");
        assert_eq!(committed[at("spec", seed)].verdict, "safe");
        for who in [v, baseline::BASELINE] {
            let fresh = plan.run_one(at(who, seed), Default::default()).unwrap();
            assert_eq!(
                fields(&fresh),
                fields(&committed[at(who, seed)]),
                "{who} at seed {seed}: the replay differs from {RUNS}"
            );
        }
    }
}

/// Replays `variant` at `seed` and checks that its only violations are
/// late writes of a client that wrote after its hold had ended, having been
/// paused across the end of that hold (stale writes, and interleavings made
/// of one), and no lock overlap.
fn paused_writer_only(plan: &Plan, variant: &str, seed: u64) {
    let (set, _) = plan
        .cells
        .iter()
        .find(|(_, shown)| shown[0] == variant)
        .unwrap();
    let s = scenario::parse_with_overrides(&plan.text, &plan.file, set).unwrap();
    let run = runner::simulate_keeping(s, seed).unwrap();
    let check = &run.check;
    assert!(
        check.overlaps.is_empty(),
        "{variant} at seed {seed}: overlaps"
    );
    assert!(!check.stale_writes.is_empty(), "{variant} at seed {seed}");
    // Pause windows per host: (start, end).
    let pauses: Vec<(String, Duration, Duration)> = run
        .history
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Fault(FaultEvent::Pause { host, for_ms }) => Some((
                host.clone(),
                e.time,
                e.time + Duration::from_millis(*for_ms),
            )),
            _ => None,
        })
        .collect();
    // A write of `client`'s acquisition `acq` applied at `at` after its hold
    // ended, the client having been paused across that end.
    let paused_late = |client: &str, acq: u64, at: Duration| {
        let hold = check
            .holds
            .iter()
            .find(|h| h.client == client && h.acq == acq)
            .unwrap();
        at > hold.end
            && pauses
                .iter()
                .any(|(h, from, to)| h == client && *from < at && *to >= hold.end)
    };
    for w in &check.stale_writes {
        assert!(
            paused_late(&w.writer.0, w.writer.1, w.applied),
            "{variant} at seed {seed}: {w:?} is not a late write of a paused client"
        );
    }
    for il in &check.interleavings {
        let late = [
            (&il.first, il.times[0]),
            (&il.second, il.times[1]),
            (&il.first, il.times[2]),
        ]
        .into_iter()
        .any(|((client, acq), at)| paused_late(client, *acq, at));
        assert!(
            late,
            "{variant} at seed {seed}: {il:?} is not a late write of a paused client"
        );
    }
}

#[test]
fn the_variant_lists_cover_every_variant() {
    let mut all: Vec<&str> = UNSAFE.iter().chain(SAFE).copied().collect();
    all.sort_unstable();
    let mut known: Vec<&str> = redlock_harness::scenario::Variant::ALL
        .iter()
        .map(|v| v.as_str())
        .collect();
    known.sort_unstable();
    assert_eq!(all, known);
}

/// majority-of-responders at its first catch (seed 59): at c3's
/// acquisition the aimed nemesis kills n4 and n5 (their connects are then
/// refused at once); c3's watchdog extends on n1 and n3, two of the three
/// nodes that answered (n2 has no key), fewer than a majority of five; n4
/// and n5 come back empty and c2 takes n2, n4 and n5 while c3 holds. The
/// spec client at the same seed is safe.
#[test]
fn majority_of_responders_is_caught_where_nodes_fail_fast() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let run = |variant: &str| {
        let set = [(
            "clients.variant".to_string(),
            toml::Value::String(variant.into()),
        )];
        let s = scenario::parse_with_overrides(&text, FILE, &set).unwrap();
        runner::simulate_keeping(s, 59).unwrap()
    };
    let flawed = run("majority-of-responders");
    let o = flawed.check.overlaps.first().expect("an overlap");
    assert_eq!((o.a.client.as_str(), o.b.client.as_str()), ("c3", "c2"));
    let events = &flawed.history.events;
    let kills: Vec<Duration> = events
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EventKind::Fault(FaultEvent::Crash { kill: true, .. })
            )
        })
        .map(|e| e.time)
        .filter(|t| *t == o.a.start)
        .collect();
    assert_eq!(
        kills.len(),
        2,
        "two kills at c3's acquisition ({:?})",
        o.a.start
    );
    let back = events
        .iter()
        .find(|e| e.time > o.a.start && matches!(e.kind, EventKind::NodeUp { .. }))
        .map(|e| e.time)
        .expect("the killed nodes come back");
    let extended_meanwhile = events.iter().any(|e| {
        e.host == "c3"
            && e.time > o.a.start
            && e.time < back
            && matches!(e.kind, EventKind::Extended { acq, .. } if acq == o.a.acq)
    });
    assert!(
        extended_meanwhile,
        "c3 extended while two of five were down"
    );
    let spec = run("spec").check;
    assert!(spec.overlaps.is_empty() && spec.stale_writes.is_empty());
}

/// majority-of-responders is caught, at seeds where the spec client is
/// safe, by the same campaign with requests that time out fast (300 ms):
/// the unreachable nodes fail at once, and two answers of two make its
/// "majority".
#[test]
fn majority_of_responders_is_caught_when_requests_time_out_fast() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let run = |variant: &str, seed: u64| {
        let set = [
            ("clients.variant", variant),
            ("clients.request_timeout", "300ms"),
        ]
        .map(|(k, v)| (k.to_string(), toml::Value::String(v.into())));
        let s = scenario::parse_with_overrides(&text, FILE, &set).unwrap();
        runner::simulate_keeping(s, seed).unwrap().check
    };
    let seeds: Vec<u64> = (1..=3).collect();
    let checks = crate::common::on_two_threads(&seeds, |seed| {
        (run("majority-of-responders", seed), run("spec", seed))
    });
    for (seed, (flawed, spec)) in checks {
        assert!(!flawed.overlaps.is_empty(), "seed {seed}: no overlap");
        assert!(
            spec.overlaps.is_empty() && spec.stale_writes.is_empty(),
            "spec at seed {seed}"
        );
    }
}

//! The online checker against the reference: a property test over
//! generated histories, and the cases it found or the definitions single
//! out, written by hand with their exact expected figures.

use std::time::Duration;

use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestRunner};

use super::super::{check, CheckResult, HoldEnd, StaleKind};
use super::gen::histories;
use super::reference;
use redlock_history::{Event, EventKind, FaultEvent, History};

/// Cases the property test runs: 10,000 (a few seconds in release), or
/// `REFCHECK_CASES` (e.g. `REFCHECK_CASES=1000000 cargo test --release
/// --lib check::reference`); `REFCHECK_SEED` draws other histories.
fn cases() -> u32 {
    env_number("REFCHECK_CASES").map_or(10_000, |n| n as u32)
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.parse()
            .unwrap_or_else(|_| panic!("{name}={text}: not a number")),
    )
}

/// The first field in which the two results differ, if any.
fn difference(online: &CheckResult, reference: &CheckResult) -> Option<String> {
    type Show = fn(&CheckResult) -> String;
    let fields: [(&str, Show); 7] = [
        ("holds", |c| format!("{:#?}", c.holds)),
        ("overlaps", |c| format!("{:#?}", c.overlaps)),
        ("stale_writes", |c| format!("{:#?}", c.stale_writes)),
        ("interleavings", |c| format!("{:#?}", c.interleavings)),
        ("rejected_writes", |c| c.rejected_writes.to_string()),
        ("liveness", |c| format!("{:#?}", c.liveness)),
        ("verdict", |c| {
            format!("{:?} {:?}", c.verdict, c.unprotected_writes)
        }),
    ];
    let (name, online, reference) = fields
        .into_iter()
        .map(|(name, show)| (name, show(online), show(reference)))
        .find(|(_, o, r)| o != r)?;
    Some(format!(
        "{name} differ:\nonline: {online}\nreference: {reference}"
    ))
}

fn rows(h: &History) -> String {
    h.events.iter().map(|e| e.row().join(" ") + "\n").collect()
}

#[test]
fn the_online_checker_agrees_with_the_reference_on_generated_histories() {
    let config = Config {
        cases: cases(),
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(env_number("REFCHECK_SEED").unwrap_or(31)),
        failure_persistence: None,
        max_shrink_iters: 20_000,
        ..Config::default()
    };
    let result = TestRunner::new(config).run(&histories(100), |h| {
        let (online, reference) = (check(&h), reference(&h));
        if online == reference {
            return Ok(());
        }
        let d = difference(&online, &reference).unwrap_or_else(|| "results differ".into());
        Err(TestCaseError::fail(format!("{d}\nhistory:\n{}", rows(&h))))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

// --- histories by hand ---

fn at(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn ev(ms: u64, host: &str, kind: EventKind) -> Event {
    Event {
        time: at(ms),
        host: host.into(),
        kind,
    }
}

fn acquired(ms: u64, client: &str, acq: u64, valid_until_ms: u64) -> Event {
    let kind = EventKind::Acquired {
        acq,
        resource: "lock".into(),
        token: format!("{client}-{acq}"),
        validity: at(valid_until_ms - ms),
        valid_until: at(valid_until_ms),
        nodes: 3,
        fence: None,
    };
    ev(ms, client, kind)
}

fn release(ms: u64, client: &str, acq: u64) -> Event {
    ev(ms, client, EventKind::ReleaseStart { acq })
}

fn sent(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    ev(ms, client, EventKind::WriteSent { acq, seq })
}

fn applied(ms: u64, client: &str, acq: u64, seq: u32) -> Event {
    let kind = EventKind::WriteApplied {
        client: client.into(),
        acq,
        seq,
        fence: None,
        resource: "lock".into(),
    };
    ev(ms, "store", kind)
}

/// Both checkers' result, once they agree.
fn both(events: Vec<Event>) -> CheckResult {
    let h = History { events };
    let (online, reference) = (check(&h), reference(&h));
    if let Some(d) = difference(&online, &reference) {
        panic!("{d}\nhistory:\n{}", rows(&h));
    }
    online
}

#[test]
fn stale_kind_boundaries() {
    let kind = |sent, superseded_at, writer_end| {
        StaleKind::of(at(sent), at(superseded_at), at(writer_end))
    };
    // Sent just before the later acquisition while the writer held: in
    // flight; after its own hold had ended (a pause), sent late, even
    // before the later acquisition.
    assert_eq!(kind(9, 10, 20), StaleKind::InFlight);
    assert_eq!(kind(9, 10, 5), StaleKind::SentLate);
    assert_eq!(kind(9, 10, 9), StaleKind::SentLate);
    assert_eq!(kind(8, 10, 9), StaleKind::InFlight);
    // Sent at the instant of the later acquisition, the writer still
    // holding: in overlap; at the instant its own hold ends: sent late.
    assert_eq!(kind(10, 10, 20), StaleKind::InOverlap);
    assert_eq!(kind(10, 10, 10), StaleKind::SentLate);
    assert_eq!(kind(19, 10, 20), StaleKind::InOverlap);
    assert_eq!(kind(20, 10, 20), StaleKind::SentLate);
    assert_eq!(kind(25, 10, 5), StaleKind::SentLate);
}

#[test]
fn a_write_applied_at_the_instant_of_a_later_acquisition_is_stale() {
    // In both orders of the two events at 10 ms.
    for write_first in [true, false] {
        let mut events = vec![acquired(0, "c1", 1, 20), sent(5, "c1", 1, 1)];
        let (w, b) = (applied(10, "c1", 1, 1), acquired(10, "c2", 1, 30));
        events.extend(if write_first { [w, b] } else { [b, w] });
        events.extend([release(25, "c1", 1), release(25, "c2", 1)]);
        let r = both(events);
        assert_eq!(r.stale_writes.len(), 1, "write first: {write_first}");
        let s = &r.stale_writes[0];
        assert_eq!((s.superseded_at, s.landed_in_start), (at(10), at(10)));
        assert_eq!(s.landed_in, ("c2".to_string(), 1));
        assert_eq!(s.kind, StaleKind::InFlight);
        assert_eq!(r.overlaps.len(), 1, "c1 holds to 20 ms");
    }
    // One instant earlier it is not stale.
    let r = both(vec![
        acquired(0, "c1", 1, 20),
        applied(9, "c1", 1, 1),
        acquired(10, "c2", 1, 30),
    ]);
    assert!(r.stale_writes.is_empty());
}

#[test]
fn touching_holds_do_not_overlap_and_a_hold_of_length_zero_overlaps_nothing() {
    let r = both(vec![
        acquired(0, "c1", 1, 10),
        acquired(10, "c2", 1, 20),
        release(20, "c2", 1),
    ]);
    assert_eq!(r.holds[0].end, at(10));
    assert_eq!(r.holds[0].end_reason, HoldEnd::ValidityEnd);
    assert!(r.overlaps.is_empty());
    // c3's hold of length zero at 15 ms, inside c2's hold.
    let r = both(vec![
        acquired(0, "c1", 1, 10),
        acquired(10, "c2", 1, 20),
        acquired(15, "c3", 1, 15),
        release(20, "c2", 1),
    ]);
    assert_eq!(r.holds[2].length(), Duration::ZERO);
    assert!(r.overlaps.is_empty());
    // One ms more of c1's validity, and c1 and c2 overlap.
    let r = both(vec![
        acquired(0, "c1", 1, 11),
        acquired(10, "c2", 1, 20),
        release(20, "c2", 1),
    ]);
    assert_eq!(r.overlaps.len(), 1);
    assert_eq!((r.overlaps[0].from, r.overlaps[0].to), (at(10), at(11)));
}

#[test]
fn a_release_at_the_validity_end_is_a_release() {
    let r = both(vec![acquired(0, "c1", 1, 10), release(10, "c1", 1)]);
    assert_eq!(
        (r.holds[0].end, r.holds[0].end_reason),
        (at(10), HoldEnd::Released)
    );
}

#[test]
fn a_write_sent_before_a_clock_slows_lands_in_overlap_on_its_own_clock() {
    // c1 valid to 10 ms at rate 1; at 4 ms its clock halves: it holds to
    // 4 + 6 × 2 = 16 ms, so its write sent at 12 ms, after c2 acquired at
    // 11 ms, is sent in overlap.
    let rate = EventKind::Fault(FaultEvent::ClockRate {
        host: "c1".into(),
        rate: 0.5,
        from: 1.0,
    });
    let r = both(vec![
        acquired(0, "c1", 1, 10),
        ev(4, "driver", rate),
        acquired(11, "c2", 1, 30),
        sent(12, "c1", 1, 1),
        applied(13, "c1", 1, 1),
        release(20, "c1", 1),
    ]);
    assert_eq!(r.holds[0].end, at(16));
    assert_eq!(r.stale_writes[0].kind, StaleKind::InOverlap);
    assert_eq!(r.overlaps.len(), 1);
}

#[test]
fn a_call_left_without_an_outcome_ends_unsuccessful_at_the_next_call() {
    // The generator's first disagreement, before the reading was written
    // down: the reference had taken c1's first call as ending at the
    // `acquired` too, giving one acquisition two latencies (1 ms and 0).
    let call = |ms: u64, call: u64| {
        let resource = "lock".into();
        ev(ms, "c1", EventKind::LockCall { call, resource })
    };
    let r = both(vec![call(0, 1), call(1, 2), acquired(1, "c1", 1, 1)]);
    let l = &r.liveness;
    assert_eq!((l.attempts, l.acquisitions), (2, 1));
    assert_eq!((l.acquire_p50_ms, l.acquire_p99_ms), (0.0, 0.0));
    assert_eq!(l.unavailable_ms, 1.0);
}

/// What a generated history shows, for the coverage test.
fn features(h: &History, r: &CheckResult) -> Vec<&'static str> {
    let moved_by_clock = r.holds.iter().any(|hold| {
        hold.end_reason == HoldEnd::ValidityEnd
            && h.events.iter().any(|e| match &e.kind {
                EventKind::Acquired {
                    acq, valid_until, ..
                } => e.host == hold.client && *acq == hold.acq && *valid_until != hold.end,
                _ => false,
            })
    });
    let stale = &r.stale_writes;
    let mut out = vec![
        ("overlap", !r.overlaps.is_empty()),
        ("interleaving", !r.interleavings.is_empty()),
        ("rejected", r.rejected_writes > 0),
        ("validity moved", moved_by_clock),
        (
            "zero-length hold",
            r.holds.iter().any(|x| x.length().is_zero()),
        ),
        (
            "two resources",
            r.holds.iter().any(|x| x.resource != r.holds[0].resource),
        ),
        ("unavailable", r.liveness.unavailable_ms > 0.0),
        (
            "stale at the acquisition's instant",
            stale.iter().any(|w| w.applied == w.landed_in_start),
        ),
        (
            "stale into own next",
            stale.iter().any(|w| w.landed_in.0 == w.writer.0),
        ),
        (
            "stale past two",
            stale.iter().any(|w| w.superseded_at != w.landed_in_start),
        ),
        ("stale unsent", stale.iter().any(|w| w.sent.is_none())),
    ];
    out.extend(StaleKind::ALL.map(|k| (k.as_str(), stale.iter().any(|w| w.kind == k))));
    let ends = [
        HoldEnd::Released,
        HoldEnd::ValidityEnd,
        HoldEnd::Lost,
        HoldEnd::RunEnd,
    ];
    out.extend(ends.map(|e| (e.as_str(), r.holds.iter().any(|x| x.end_reason == e))));
    out.into_iter()
        .filter(|(_, shown)| *shown)
        .map(|(f, _)| f)
        .collect()
}

#[test]
fn generated_histories_show_every_case_the_definitions_name() {
    use proptest::strategy::{Strategy, ValueTree};
    let config = Config {
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(31),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let mut seen = std::collections::BTreeMap::<&str, u32>::new();
    for _ in 0..2_000 {
        let h = histories(100).new_tree(&mut runner).unwrap().current();
        for f in features(&h, &reference(&h)) {
            *seen.entry(f).or_default() += 1;
        }
    }
    // Every feature in at least 1 % of the histories (the rarest, an
    // interleaving, is in about 5 %).
    assert_eq!(seen.len(), 18, "all 18 features: {seen:?}");
    assert!(seen.values().all(|&n| n >= 20), "{seen:?}");
}

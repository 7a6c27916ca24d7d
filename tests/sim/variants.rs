//! The client flaws (`clients.variant`): each scenario in
//! `scenarios/variants/` shows its flaw (a violation, or for the flaws that
//! cost only liveness a degraded run), and the same scenario with the correct
//! client (`variant = "spec"`) is safe and not degraded.

use redlock_harness::check::Verdict;
use redlock_harness::history::{EventKind, History};
use redlock_harness::runner::{self, Run};
use redlock_harness::scenario::{self, Expect, Variant};
use std::path::PathBuf;
use std::time::Duration;

fn file(variant: &str) -> PathBuf {
    PathBuf::from("scenarios/variants").join(format!("{variant}.toml"))
}

/// Runs the variant's scenario as written, or with `clients.variant`
/// overridden, with the scenario's own seed.
fn run(variant: &str, with: Option<&str>) -> Run {
    let path = file(variant);
    let text = std::fs::read_to_string(&path).unwrap();
    let overrides: Vec<(String, toml::Value)> = with
        .map(|v| ("clients.variant".to_string(), toml::Value::String(v.into())))
        .into_iter()
        .collect();
    let s = scenario::parse_with_overrides(&text, &path.display().to_string(), &overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    let seed = s.seed;
    runner::simulate_keeping(s, seed).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn describe(r: &Run) -> String {
    let l = &r.check.liveness;
    format!(
        "{} (variant {}): outcome {}, overlaps {}, interleavings {}, attempts {}, acquisitions {}, p50 {} ms, unavailable {} ms of {:?}",
        r.scenario.name,
        r.scenario.clients[0].variant.as_str(),
        r.outcome(),
        r.check.overlaps.len(),
        r.check.interleavings.len(),
        l.attempts,
        l.acquisitions,
        l.acquire_p50_ms,
        l.unavailable_ms,
        r.scenario.duration,
    )
}

/// The flaw shows with the variant; the correct client is safe and not
/// degraded in the same scenario. Returns both runs.
fn flaw_shows(variant: &str) -> (Run, Run) {
    let flawed = run(variant, None);
    assert!(
        flawed
            .scenario
            .clients
            .iter()
            .all(|c| c.variant.as_str() == variant),
        "{}: every client should use variant {variant}",
        file(variant).display()
    );
    let expect = flawed.scenario.expect;
    assert_ne!(
        expect,
        Expect::Safe,
        "{variant}: expect must be violation or degraded"
    );
    assert_eq!(flawed.outcome(), expect.as_str(), "{}", describe(&flawed));
    assert!(flawed.as_expected(), "{}", describe(&flawed));
    assert!(
        redlock_report::RunOutput::of(&flawed).as_expected(),
        "report and runner must agree"
    );

    let spec = run(variant, Some("spec"));
    assert!(spec
        .scenario
        .clients
        .iter()
        .all(|c| c.variant == Variant::Spec));
    assert_eq!(spec.check.verdict, Verdict::Safe, "{}", describe(&spec));
    assert_eq!(spec.outcome(), "safe", "{}", describe(&spec));
    assert!(
        !spec.as_expected(),
        "spec must not show the flaw: {}",
        describe(&spec)
    );
    (flawed, spec)
}

/// `acquired` events of `client`: (time, validity, valid_until).
fn acquisitions(h: &History, client: &str) -> Vec<(Duration, Duration, Duration)> {
    h.of(client)
        .filter_map(|e| match &e.kind {
            EventKind::Acquired {
                validity,
                valid_until,
                ..
            } => Some((e.time, *validity, *valid_until)),
            _ => None,
        })
        .collect()
}

fn failures(h: &History, client: &str) -> Vec<String> {
    h.of(client)
        .filter_map(|e| match &e.kind {
            EventKind::LockFailed { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

const TTL_1S: Duration = Duration::from_secs(1);

#[test]
fn every_variant_has_a_scenario() {
    for v in Variant::ALL.iter().filter(|v| **v != Variant::Spec) {
        let s = scenario::load(&file(v.as_str())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.clients[0].variant, *v, "{}", file(v.as_str()).display());
        assert!(!s.description.is_empty());
        let liveness_only = matches!(v, Variant::NoReleaseOnFailure | Variant::Sequential);
        let want = if liveness_only {
            Expect::Degraded
        } else {
            Expect::Violation
        };
        assert_eq!(s.expect, want, "{}", v.as_str());
    }
}

#[test]
fn no_validity_check() {
    let (flawed, spec) = flaw_shows("no-validity-check");
    // c1 accepted a quorum with no validity left, and wrote anyway.
    let c1 = acquisitions(&flawed.history, "c1");
    assert_eq!(c1[0].1, Duration::ZERO, "{c1:?}");
    assert!(!flawed.check.interleavings.is_empty());
    // The correct client saw the validity exhausted.
    assert!(failures(&spec.history, "c1")[0].starts_with("validity_exhausted"));
}

#[test]
fn extend_resurrects() {
    let (flawed, spec) = flaw_shows("extend-resurrects");
    // c1's first acquisition was extended after its validity had run out.
    let first_end = acquisitions(&flawed.history, "c1")[0].2;
    let late = flawed
        .history
        .of("c1")
        .any(|e| matches!(e.kind, EventKind::Extended { acq: 1, .. }) && e.time > first_end);
    assert!(
        late,
        "no extension after the validity ended at {first_end:?}"
    );
    // The correct watchdog declared it lost.
    assert!(spec
        .history
        .of("c1")
        .any(|e| matches!(e.kind, EventKind::Lost { acq: 1, .. })));
}

#[test]
fn wall_clock_elapsed() {
    let (flawed, spec) = flaw_shows("wall-clock-elapsed");
    let ttl = flawed.scenario.clients[0].ttl;
    assert!(acquisitions(&flawed.history, "c1")[0].1 > ttl);
    assert!(acquisitions(&spec.history, "c1")[0].1 < ttl);
}

#[test]
fn no_drift_allowance() {
    let (flawed, spec) = flaw_shows("no-drift-allowance");
    let ttl = flawed.scenario.clients[0].ttl;
    let (_, flawed_v, _) = acquisitions(&flawed.history, "c1")[0];
    let (_, spec_v, _) = acquisitions(&spec.history, "c1")[0];
    // The difference is the drift term: ttl × 1% + 2ms.
    assert_eq!(flawed_v - spec_v, ttl / 100 + Duration::from_millis(2));
}

#[test]
fn unsigned_validity() {
    let (flawed, spec) = flaw_shows("unsigned-validity");
    let year = Duration::from_secs(365 * 24 * 3600);
    assert!(acquisitions(&flawed.history, "c1")[0].1 > year);
    assert!(failures(&spec.history, "c1")[0].starts_with("validity_exhausted"));
    assert_eq!(flawed.scenario.clients[0].ttl, TTL_1S);
}

#[test]
fn plain_del_release() {
    let (flawed, spec) = flaw_shows("plain-del-release");
    // c1's stale release deleted keys that were not its own.
    let deleted = |h: &History| {
        h.of("c1")
            .find_map(|e| match e.kind {
                EventKind::Released { acq: 1, nodes } => Some(nodes),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(deleted(&flawed.history), 3);
    assert_eq!(deleted(&spec.history), 0);
}

#[test]
fn no_release_on_failure() {
    let (flawed, spec) = flaw_shows("no-release-on-failure");
    let (f, s) = (&flawed.check.liveness, &spec.check.liveness);
    assert!(f.acquisitions * 2 < s.acquisitions, "{f:?} vs {s:?}");
    assert!(f.unavailable_ms > 3.0 * s.unavailable_ms, "{f:?} vs {s:?}");
}

#[test]
fn sequential() {
    let (flawed, spec) = flaw_shows("sequential");
    let (f, s) = (&flawed.check.liveness, &spec.check.liveness);
    // Five round trips instead of one.
    assert!(f.acquire_p50_ms >= 4.0 * s.acquire_p50_ms, "{f:?} vs {s:?}");
    assert!(f.acquisitions < s.acquisitions, "{f:?} vs {s:?}");
}

#[test]
fn legacy_setnx() {
    let (flawed, spec) = flaw_shows("legacy-setnx");
    assert_eq!(flawed.scenario.cluster.nodes, 1);
    // The lock value is a timestamp, and the node's key has no TTL.
    let no_ttl = flawed.history.events.iter().any(|e| {
        matches!(&e.kind, EventKind::KeySet { token, expires_at: None, .. }
            if token.parse::<i64>().is_ok())
    });
    assert!(no_ttl);
    assert!(spec.history.events.iter().all(|e| !matches!(
        &e.kind,
        EventKind::KeySet {
            expires_at: None,
            ..
        }
    )));
}

#[test]
fn majority_of_responders() {
    let (flawed, _spec) = flaw_shows("majority-of-responders");
    // c2 "acquired" with 2 of 5 nodes.
    let c2 = flawed.history.of("c2").find_map(|e| match e.kind {
        EventKind::Acquired { nodes, .. } => Some(nodes),
        _ => None,
    });
    assert_eq!(c2, Some(2));
}

/// The degraded rule, on its edges, from one run's figures.
#[test]
fn degraded_rule() {
    let mut run = run("sequential", Some("spec"));
    let duration_ms = run.scenario.duration.as_secs_f64() * 1e3;
    let ttl_ms = run.scenario.max_ttl.as_secs_f64() * 1e3;
    let l = &mut run.check.liveness;
    l.unavailable_ms = 0.5 * duration_ms - 1.0;
    l.acquire_p50_ms = 0.25 * ttl_ms - 1.0;
    assert_eq!(run.outcome(), "safe");
    run.check.liveness.unavailable_ms = 0.5 * duration_ms;
    assert_eq!(run.outcome(), "degraded");
    run.check.liveness.unavailable_ms = 0.0;
    run.check.liveness.acquire_p50_ms = 0.25 * ttl_ms;
    assert_eq!(run.outcome(), "degraded");
    assert!(run.as_expected(), "expect = degraded");
    // A violation is never "degraded".
    run.check.verdict = Verdict::Violation;
    assert_eq!(run.outcome(), "violation");
    assert!(!run.as_expected());
}

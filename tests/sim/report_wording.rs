//! How a simulated run's report names its lock: the default resource `lock`
//! is "the lock" (never "the lock lock"), another is `the lock "orders"`;
//! its figures are measured (a lab run's are "not measured": tests/lab/
//! report.rs) and its time is simulated time.

use redlock_harness::runner;
use redlock_report::RunOutput;
use std::path::Path;

/// Three masters, an immediate restart: a lock overlap, a stale write and
/// an interleaving on seed 1.
const FILE: &str = "scenarios/crash_restart_immediate.toml";

/// report.md, index.html and summary.json of seed 1 of [`FILE`] with `sets`.
fn reports(sets: &[&str]) -> (String, String, serde_json::Value) {
    let o: Vec<_> = sets.iter().map(|s| runner::parse_set(s).unwrap()).collect();
    let s = runner::load_file(Path::new(FILE), &o).unwrap_or_else(|e| panic!("{e}"));
    let run = runner::simulate(s, 1).unwrap_or_else(|e| panic!("{e}"));
    assert!(!run.check.overlaps.is_empty(), "no overlap to tell");
    let out = RunOutput::of(&run);
    (
        redlock_report::report_md(&out),
        redlock_report::index_html(&out),
        redlock_report::summary_json(&out),
    )
}

#[test]
fn the_default_resource_is_the_lock_never_the_lock_lock() {
    let (md, html, json) = reports(&[]);
    for text in [&md, &html] {
        assert!(!text.contains("lock lock"), "{text}");
        assert!(text.contains("held the lock at the same time"), "{text}");
    }
    assert!(md.contains("in seconds of simulated time"), "{md}");
    assert!(!md.contains("not measured"), "{md}");
    assert!(json["attempts"].as_u64().unwrap() > 0, "{json}");
    assert!(json["acquire_p50_ms"].as_f64().unwrap() > 0.0, "{json}");
}

#[test]
fn another_resource_is_named_after_the_lock() {
    let (md, html, _) = reports(&["clients.resource=orders"]);
    assert!(
        md.contains("held the lock \"orders\" at the same time"),
        "{md}"
    );
    assert!(html.contains("held the lock &quot;orders&quot; at the same time"));
    assert!(!md.contains("lock orders"), "{md}");
}

//! A lab run's report says what the lab cannot measure: its lock calls,
//! acquire latencies and time unavailable read "not measured" (null in
//! summary.json), never 0; its time is the wall clock's; and the default
//! resource `lock` is "the lock", never "the lock lock".

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// Seed 1 of the lab-scale immediate restart with the built-in client (a
/// lock overlap by its structure); its directory.
fn lab_run(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redlock-lab-report-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN)
        .args(["lab", "tests/data/lab/crash_restart.toml", "--seed", "1"])
        .arg("--out")
        .arg(&dir)
        .args(["--", BIN, "lab-client"])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("attempts: not measured"), "{stdout}");
    dir
}

#[test]
fn a_lab_report_says_not_measured_wall_time_and_the_lock() {
    let dir = lab_run("measured");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let (md, html, svg) = (read("report.md"), read("index.html"), read("timeline.svg"));
    for row in [
        "| lock calls | not measured |",
        "| acquire latency p50 | not measured |",
        "| acquire latency p99 | not measured |",
        "last event) | not measured |",
        "in seconds of wall time since the start",
        "held the lock at the same time",
    ] {
        assert!(md.contains(row), "report.md lacks {row:?}:\n{md}");
    }
    for text in [&md, &html] {
        assert!(!text.contains("simulated time"), "{text}");
        assert!(!text.contains("lock lock"), "{text}");
        assert!(!text.contains("| 0.0 ms |"), "{text}");
    }
    assert!(
        html.contains("<td>lock calls</td><td>not measured</td>"),
        "{html}"
    );
    assert!(svg.contains("wall time since the start (s)"));
    assert!(!svg.contains("simulated time"));
    let json: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    for key in [
        "attempts",
        "acquire_p50_ms",
        "acquire_p99_ms",
        "unavailable_ms",
    ] {
        assert!(
            json[key].is_null(),
            "{key} is {} in summary.json",
            json[key]
        );
    }
    assert!(json["acquisitions"].as_u64().unwrap() > 0);
    assert_eq!(json["verdict"], "violation");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where the run's wall time went: its phases add up to the wall time,
/// the scenario's phase is its `duration` on the run's clock (a
/// millisecond's step of the lab's loop, a margin for a loaded machine),
/// the wait after the end at most two TTLs and a step, and the report
/// shows them.
#[test]
fn a_lab_run_says_where_its_wall_time_went() {
    let dir = lab_run("phases");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    let p = &json["phases_ms"];
    let ms = |k: &str| {
        p[k].as_f64()
            .unwrap_or_else(|| panic!("phases_ms.{k}: {p}"))
    };
    let keys = [
        "servers",
        "ready",
        "scenario",
        "after_end",
        "stop",
        "judging",
    ];
    let sum: f64 = keys.iter().map(|k| ms(k)).sum();
    let wall = json["wall_ms"].as_f64().unwrap();
    assert!((sum - wall).abs() < 1.0, "{p} add up to {sum}, wall {wall}");
    // tests/data/lab/crash_restart.toml: duration 4 s, ttl 1 s.
    let scenario = ms("scenario");
    assert!((4000.0..4250.0).contains(&scenario), "{p}");
    assert!(ms("after_end") <= 2000.0 + 250.0, "{p}");
    assert!(ms("ready") > 0.0 && ms("servers") > 0.0, "{p}");
    let md = read("report.md");
    assert!(
        md.contains("| wall time, phase by phase | servers up "),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

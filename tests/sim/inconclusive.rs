//! A simulated run whose scripted faults never acted is `inconclusive`,
//! naming each fault and why, and never what the scenario expects (exit
//! 1); a sweep counts such runs apart.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
const FILE: &str = "tests/data/never_triggered.toml";

#[test]
fn a_scripted_trigger_that_never_comes_makes_the_run_inconclusive() {
    let dir = std::env::temp_dir().join(format!("redlock-never-{}", std::process::id()));
    let out = Command::new(BIN)
        .args(["run", FILE, "--out"])
        .arg(&dir)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("verdict: inconclusive\n"), "{stdout}");
    assert!(
        stdout.contains(
            "inconclusive: fault 1 (crash n1 100 ms after c2:acquired, line 17) never acted: \
             its trigger, c2:acquired, never came\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "inconclusive: fault 3 (crash n2 at 2000 ms, line 28) never acted: its node was \
             already down\n"
        ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("fault 2 "),
        "the second fault acted: {stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_counts_inconclusive_runs_apart() {
    let dir = std::env::temp_dir().join(format!("redlock-never-sweep-{}", std::process::id()));
    let out = Command::new(BIN)
        .args(["sweep", FILE, "--seeds", "1..=3", "--jobs", "2", "--out"])
        .arg(&dir)
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert!(lines[0].ends_with(",inconclusive_runs"), "{summary}");
    assert!(
        lines[1].starts_with("3,0,,,,"),
        "no conclusive run, no rate: {summary}"
    );
    assert!(lines[1].ends_with(",3"), "{summary}");
    let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert_eq!(runs.matches(",inconclusive,").count(), 3, "{runs}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_of_several_files_names_the_inconclusive_runs_it_left_out() {
    let dir = std::env::temp_dir().join(format!("redlock-never-set-{}", std::process::id()));
    let out = Command::new(BIN)
        .args(["sweep", FILE, "scenarios/two_resources.toml"])
        .args(["--seeds", "1..=2", "--jobs", "2", "--out"])
        .arg(&dir)
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "0 violations in 2 runs of 2 scenarios that expect no violation; \
             the largest 95% upper bound is"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 more runs were inconclusive (never-triggered 2)"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("| never-triggered | safe |  | 1..=2 | 0 | 2 | 0 |"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

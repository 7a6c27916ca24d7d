//! Runs that tested nothing are `inconclusive`, never `safe`, and say why:
//! a driver that exits at once, one whose lock command the servers cannot
//! run, and a lab sweep that counts such runs apart and gives no rate.
//! (A simulated scenario whose scripted trigger never comes:
//! `tests/sim/inconclusive.rs`.)

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

fn fresh_dir(name: &str) -> crate::common::Scratch {
    crate::common::Scratch::fresh(&format!("inconclusive-{name}"))
}

fn lab(file: &str, out: &Path, extra: &[&str], cmd: &[&str]) -> Output {
    Command::new(BIN)
        .args(["lab", file, "--out"])
        .arg(out)
        .args(extra)
        .arg("--")
        .args(cmd)
        .output()
        .expect("the binary runs")
}

#[test]
fn a_driver_that_exits_at_once_is_inconclusive_naming_each_cause() {
    let dir = fresh_dir("exit");
    let out = lab(
        "scenarios/libraries/restart_delayed-redlock.toml",
        &dir,
        &[],
        &["sh", "-c", "exit 3"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "never as expected: {stdout}");
    assert!(stdout.contains("verdict: inconclusive\n"), "{stdout}");
    for cause in [
        "inconclusive: fault 2 (crash n2 100 ms after c1:acquired, line 28) never acted: its trigger, c1:acquired, never came",
        "inconclusive: no client ever held the lock",
        "inconclusive: c1 ended before the run's end (exit status: 3)",
        "inconclusive: c2 ended before the run's end (exit status: 3)",
    ] {
        assert!(stdout.contains(cause), "{cause}:\n{stdout}");
    }
    let json = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(json.contains("\"verdict\": \"inconclusive\""), "{json}");
    assert!(json.contains("\"kind\": \"client_failed\""), "{json}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## Inconclusive"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A driver whose lock script calls a command the server does not know: it
/// never locks, and the lab names the command and the reply.
#[test]
fn a_lock_command_the_node_cannot_run_is_inconclusive_naming_it() {
    let dir = fresh_dir("unknown");
    let script = concat!(
        r#"cli() { redis-cli -h "${REDLOCK_STORE%:*}" -p "${REDLOCK_STORE##*:}" "$@"; };"#,
        r#" node="${REDLOCK_NODES%%,*}"; cli READY "$REDLOCK_CLIENT" > /dev/null;"#,
        r#" redis-cli -h "${node%:*}" -p "${node##*:}" EVAL "return redis.call('NOSUCHLOCKCMD', KEYS[1])" 1 lock;"#,
        r#" sleep 1.5"#
    );
    let out = lab("tests/data/lab/idle.toml", &dir, &[], &["sh", "-c", script]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("verdict: inconclusive\n"), "{stdout}");
    assert!(
        stdout.contains("inconclusive: the servers answered EVAL with: ERR ")
            && stdout.contains("Unknown Redis command called from script")
            && stdout.contains("(n1 to c1, c2)"),
        "{stdout}"
    );
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    // The detail holds Redis's comma ("script: <sha>, on @user_script:1."),
    // so the CSV quotes it.
    assert!(
        history.contains(",c1,server_error,\"server=n1 command=EVAL error=ERR "),
        "{history}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lab_sweep_counts_its_inconclusive_runs_apart_and_gives_no_rate() {
    let dir = fresh_dir("sweep");
    let out = lab(
        "tests/data/lab/idle.toml",
        &dir,
        &["--seeds", "1..=2", "--jobs", "2"],
        &["sh", "-c", "exit 3"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a run tested nothing: {stdout}");
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    let head: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    let at = |c: &str| head.iter().position(|h| *h == c).unwrap();
    assert_eq!(head.last(), Some(&"inconclusive_runs"), "{summary}");
    assert_eq!(row[at("runs")], "2");
    assert_eq!(row[at("inconclusive_runs")], "2");
    assert_eq!(row[at("violation_rate")], "", "no conclusive run, no rate");
    let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert!(
        runs.lines().next().unwrap().ends_with(",inconclusive"),
        "{runs}"
    );
    assert!(
        runs.contains("c1 ended before the run's end (exit status: 3)"),
        "{runs}"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## Inconclusive runs"), "{report}");
    assert!(
        report.contains("No run was conclusive: there is nothing to conclude of safety."),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! A sweep of several files (`sweep A.toml B.toml --out DIR`, how
//! `reports/no-false-alarms/` is made): each file is swept into `DIR/<name>/`
//! exactly as `sweep FILE --out DIR/<name>` sweeps it; `DIR/summary.csv` and
//! the report cover them all and open with the answer; `--expect` picks the
//! files; `--strict` fails on a scenario expected safe that violated; bad
//! input (any bad file, no `--out`, two files of one name, `--shard`) is
//! exit 2 with nothing written.

use crate::common;

use common::runs_without_wall;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// Short scenarios: a safe one (no fault), and one that violates at once
/// (an immediate restart of two of three masters while c1 holds the lock).
const QUIET: &str = r#"name = "quiet"
duration = "3s"
expect = "safe"

[cluster]
nodes = 3

[clients]
count = 2
ttl = "1s"
hold = "100ms..300ms"
think = "0s..100ms"
"#;

const CRASHES: &str = r#"name = "crashes"
duration = "4s"
expect = "violation"

[cluster]
nodes = 3
restart = "immediate"

[clients]
count = 2
ttl = "2s"
hold = "1500ms"
think = "0s..50ms"
retry_delay = "20ms"
reconnect_backoff = "20ms"

[[faults]]
after = "c1:acquired"
at = "10ms"
do = "crash"
host = "n1"

[[faults]]
after = "c1:acquired"
at = "10ms"
do = "crash"
host = "n2"
"#;

fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::dir(&format!("sim-set-{tag}"))
}

fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn sweep(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = Command::new(BIN);
    c.arg("sweep").args(["--jobs", "2", "--seeds", "1..=3"]);
    for a in args {
        c.arg(a);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn each_file_is_swept_as_alone_and_the_set_opens_with_its_answer() {
    let dir = temp_dir("alone");
    let quiet = file(&dir, "quiet.toml", QUIET);
    let crashes = file(&dir, "crashes.toml", CRASHES);
    let out = dir.join("set");
    let o = sweep(&[&"--out", &out, &quiet, &crashes]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("3 violating runs in 6 runs of 2 scenarios: crashes (3, expected)."),
        "{stdout}"
    );
    // The same runs as a sweep of each file alone.
    for (f, name) in [(&quiet, "quiet"), (&crashes, "crashes")] {
        let alone = dir.join(format!("alone-{name}"));
        let o = sweep(&[&"--out", &alone, f]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(
            runs_without_wall(&out.join(name)),
            runs_without_wall(&alone),
            "{name}"
        );
        assert!(out.join(name).join("index.html").is_file());
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert!(
        lines[0].starts_with(
            "scenario,file,expect,combination,runs,violating_runs,violation_rate,ci_low,ci_high,"
        ),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 3, "{summary}");
    assert!(lines[1].starts_with("quiet,"), "{}", lines[1]);
    assert!(
        lines[1].contains(",safe,,3,0,0.000000,0.000000,0.561497,"),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("crashes,"), "{}", lines[2]);
    assert!(
        lines[2].contains(",violation,,3,3,1.000000,"),
        "{}",
        lines[2]
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let first = md.lines().find(|l| l.starts_with("**Answer:**")).unwrap();
    assert!(first.contains("3 violating runs in 6 runs"), "{first}");
    assert!(md.contains("[quiet](<quiet/index.html>)"), "{md}");
    assert!(md.contains("--seeds 1..=3"), "{md}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("href=\"quiet/index.html\""), "{html}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn expect_picks_the_files_and_strict_fails_on_a_safe_one_that_violated() {
    let dir = temp_dir("expect");
    let quiet = file(&dir, "quiet.toml", QUIET);
    let crashes = file(&dir, "crashes.toml", CRASHES);
    let out = dir.join("safe");
    let o = sweep(&[
        &"--strict",
        &"--expect",
        &"safe",
        &"--out",
        &out,
        &crashes,
        &quiet,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(
            "0 violations in 3 runs of 1 scenario that expect no violation; \
                         each scenario 0 in 3 runs, 95% upper bound 56.1%."
        ),
        "{stdout}"
    );
    assert!(!out.join("crashes").exists());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Left out by --expect:"), "{md}");
    assert!(md.contains("crashes.toml (violation)"), "{md}");
    // One file is enough with --expect; a crash scenario that claims to be
    // safe fails --strict, and says NOT expected.
    let liar = file(
        &dir,
        "liar.toml",
        &CRASHES
            .replace("expect = \"violation\"", "expect = \"safe\"")
            .replace("name = \"crashes\"", "name = \"liar\""),
    );
    let out = dir.join("strict");
    let o = sweep(&[
        &"--strict",
        &"--expect",
        &"safe",
        &"--out",
        &out,
        &liar,
        &quiet,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("liar (3, NOT expected)"), "{}", text(&o));
    let o = sweep(&[&"--expect", &"safe", &"--out", &out, &liar]);
    assert_eq!(o.status.code(), Some(0), "without --strict: {}", text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_exit_2_and_nothing_is_written() {
    let dir = temp_dir("bad");
    let quiet = file(&dir, "quiet.toml", QUIET);
    let twin = file(&dir, "twin.toml", QUIET);
    let broken = file(
        &dir,
        "broken.toml",
        &QUIET.replace("count = 2", "count = \"two\""),
    );
    let out = dir.join("out");
    let single = dir.join("single");
    let o = sweep(&[&"--out", &single, &quiet]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let cases: Vec<(Vec<&dyn AsRef<std::ffi::OsStr>>, &str)> = vec![
        (vec![&quiet, &twin], "needs --out"),
        (vec![&"--out", &out, &quiet, &twin], "both named"),
        (vec![&"--out", &out, &quiet, &broken], "broken.toml"),
        (
            vec![&"--out", &out, &"--shard", &"1/2", &quiet, &twin],
            "--shard",
        ),
        (
            vec![&"--out", &out, &"--expect", &"degraded", &quiet],
            "no file left",
        ),
        (
            vec![&"--out", &single, &"--expect", &"safe", &quiet],
            "holds the sweep of one",
        ),
    ];
    for (args, says) in cases {
        let o = sweep(&args);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{says}: {t}");
        assert!(t.contains(says), "{says}: {t}");
        assert!(!t.contains("panicked"), "{t}");
        assert!(!out.exists(), "{says}: wrote {}", out.display());
        assert!(!single.join("quiet").exists(), "{says}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_set_and_a_one_file_sweep_never_share_a_directory() {
    let dir = temp_dir("share");
    let quiet = file(&dir, "quiet.toml", QUIET);
    let named = file(
        &dir,
        "named.toml",
        &QUIET.replace("name = \"quiet\"", "name = \"report.md\""),
    );
    let set = dir.join("set");
    let o = sweep(&[&"--expect", &"safe", &"--out", &set, &quiet]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let before = std::fs::read_to_string(set.join("summary.csv")).unwrap();
    // One file into the set's directory: refused, the set's files intact.
    let o = sweep(&[&"--out", &set, &quiet]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("several files"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(set.join("summary.csv")).unwrap(),
        before
    );
    assert!(!set.join("runs.csv").exists());
    // A scenario named after one of the set's files: refused before it runs.
    let out = dir.join("named");
    let o = sweep(&[&"--out", &out, &quiet, &named]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("rename the scenario"), "{}", text(&o));
    assert!(!out.exists());
    // A scenario's directory holding another sweep: refused before any run.
    let other = dir.join("other");
    let o = sweep(&[&"--out", &other.join("quiet"), &named]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let crashes = file(&dir, "crashes.toml", CRASHES);
    let o = sweep(&[&"--out", &other, &crashes, &quiet]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        !other.join("crashes").exists(),
        "crashes ran before the refusal"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! `redlock-sim frontier` through the binary: on fixtures with a boundary
//! known from theory (tests/data/frontier_*.toml) the printed values
//! bracket it, both directions; every value violating or none gives exit 1
//! with a report (a violating value stopping after its first batch of 16
//! seeds); bad input gives exit 2 and writes nothing. Few seeds and a
//! coarse resolution keep it to seconds.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
const RESTART: &str = "tests/data/frontier_restart.toml";
const HOLD: &str = "tests/data/frontier_hold.toml";

fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::fresh(&format!("sim-frontier-{tag}"))
}

fn frontier(file: &str, args: &[&str], out: &Path) -> Output {
    Command::new(BIN)
        .arg("frontier")
        .arg(file)
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The value and the number after it in `prefix <value> <word> <n>`.
fn line(stdout: &str, prefix: &str, word: &str) -> (String, u64) {
    let l = stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in {stdout}"));
    let parts: Vec<&str> = l[prefix.len()..].split_whitespace().collect();
    assert_eq!(parts.len(), 3, "{l}");
    assert_eq!(parts[1], word, "{l}");
    (parts[0].to_string(), parts[2].parse().unwrap())
}

fn ttl(v: &str) -> f64 {
    v.strip_suffix("ttl").unwrap().parse().unwrap()
}

fn secs(v: &str) -> f64 {
    match v.strip_suffix("ms") {
        Some(ms) => ms.parse::<f64>().unwrap() / 1e3,
        None => v.strip_suffix('s').unwrap().parse().unwrap(),
    }
}

#[test]
fn finds_where_violations_stop_along_the_restart_delay() {
    let out = temp_dir("restart");
    let args = [
        "--key",
        "cluster.restart",
        "--from",
        "0.1ttl",
        "--to",
        "1.5ttl",
        "--seeds",
        "4",
        "--resolution",
        "0.05ttl",
    ];
    let o = frontier(RESTART, &[&args[..], &["--jobs", "2"]].concat(), &out);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "key: cluster.restart");
    let (v, seed) = line(&stdout, "violating: ", "seed");
    let (s, runs) = line(&stdout, "safe: ", "runs");
    let (v, s) = (ttl(&v), ttl(&s));
    // Theory (the fixture's description): a violation whenever the delay plus
    // c2's reconnection lag (at most about 0.105ttl) is under c1's hold
    // (0.8ttl); none from 0.8ttl up.
    assert!(
        v >= 0.69 && v < s && s <= 0.8 + 1e-9,
        "violating {v}, safe {s}"
    );
    assert!(
        s - v <= 0.05 + 1e-9,
        "bracket {v}..{s} wider than the resolution"
    );
    assert!((1..=4).contains(&seed));
    assert_eq!(runs, 4, "a safe value runs every seed");

    // The report opens with its answer; the CSV lists the values tried.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let answer = md.lines().nth(2).unwrap();
    assert!(
        answer.starts_with(&format!("Violations stop between {v}ttl and {s}ttl")),
        "{answer}"
    );
    assert!(md.contains("0 of 4 runs, 95% interval for the rate \\[0, 49.0%\\]"));
    assert!(md.contains("## Minimal scenario"));
    let csv = std::fs::read_to_string(out.join("frontier.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.len() >= 4, "{csv}");
    assert!(rows[0].starts_with("0.1ttl,1,4,4,"), "{csv}");
    assert!(rows.last().unwrap().starts_with("1.5ttl,2,4,0,"), "{csv}");
    for f in ["index.html", "frontier.svg"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // A minimal scenario, or the reason there is none.
    let minimal = stdout.lines().find(|l| l.starts_with("minimal: ")).unwrap();
    let path = &minimal["minimal: ".len()..];
    assert!(
        path.starts_with("none (") || Path::new(path).is_file(),
        "{minimal}"
    );

    // The same search on one thread: the same values, counts and seeds.
    let one = temp_dir("restart-j1");
    let o1 = frontier(RESTART, &[&args[..], &["--jobs", "1"]].concat(), &one);
    assert_eq!(o1.status.code(), Some(0));
    assert_eq!(
        csv,
        std::fs::read_to_string(one.join("frontier.csv")).unwrap()
    );
    assert_eq!(
        stdout.replace(out.to_str().unwrap(), "D"),
        text(&o1.stdout).replace(one.to_str().unwrap(), "D")
    );
}

#[test]
fn finds_where_violations_start_when_they_grow_with_the_key() {
    let out = temp_dir("hold");
    let o = frontier(
        HOLD,
        &[
            "--key",
            "clients.hold",
            "--from",
            "1s",
            "--to",
            "8s",
            "--seeds",
            "4",
            "--resolution",
            "300ms",
        ],
        &out,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    let (v, _) = line(&stdout, "violating: ", "seed");
    let (s, runs) = line(&stdout, "safe: ", "runs");
    let (v, s) = (secs(&v), secs(&s));
    // Theory: safe while c1's hold is under the 3 s restart delay, violating
    // once it exceeds the delay plus c2's reconnection lag (about 1.05 s).
    assert!(s >= 3.0 && s < v && v <= 4.1, "safe {s}, violating {v}");
    assert!(v - s <= 0.3 + 1e-9);
    assert_eq!(runs, 4);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Violations start between"), "{md}");
}

#[test]
fn exits_1_with_a_report_when_every_value_violates_or_none_does() {
    let all = temp_dir("all");
    let o = frontier(
        RESTART,
        &[
            "--key",
            "cluster.restart",
            "--from",
            "0.1ttl",
            "--to",
            "0.3ttl",
            "--seeds",
            "20",
        ],
        &all,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("\nsafe: none\n"), "{stdout}");
    assert!(
        stdout.contains("result: every value tried violated"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(all.join("report.md")).unwrap();
    assert!(md.contains("Every value tried violated"));
    // 20 seeds, every run violates: each value stops after its first batch
    // of 16 and reports seed 1.
    assert!(stdout.contains("violating: 0.3ttl seed 1\n"), "{stdout}");
    let csv = std::fs::read_to_string(all.join("frontier.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for (row, value) in rows.iter().zip(["0.1ttl", "0.3ttl"]) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[0], value);
        assert_eq!(&cells[2..4], ["16", "16"], "{row}");
        assert_eq!((cells[7], cells[8]), ("1", "true"), "{row}");
    }
    assert!(md.contains("16 (stopped at the first violation)"), "{md}");

    let none = temp_dir("none");
    let o = frontier(
        RESTART,
        &[
            "--key",
            "cluster.restart",
            "--from",
            "0.9ttl",
            "--to",
            "1.5ttl",
            "--seeds",
            "2",
        ],
        &none,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("\nviolating: none\n"), "{stdout}");
    assert!(
        stdout.contains("result: no value tried violated"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(none.join("report.md")).unwrap();
    assert!(md.contains("No value tried violated"));
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let work = temp_dir("bad");
    std::fs::create_dir_all(&work).unwrap();
    let broken = work.join("broken.toml");
    std::fs::write(&broken, "name = [\n").unwrap();
    let fixture = std::fs::canonicalize(RESTART).unwrap();
    let fixture = fixture.to_str().unwrap();
    let broken = broken.to_str().unwrap();
    let cases: [(&str, &[&str], &str); 7] = [
        (
            fixture,
            &["--key", "cluster.topology", "--from", "1", "--to", "3"],
            "cluster.topology",
        ),
        (
            fixture,
            &["--key", "name", "--from", "1", "--to", "3"],
            "not a numeric key",
        ),
        (
            fixture,
            &["--key", "cluster.restartt", "--from", "1s", "--to", "3s"],
            "restartt",
        ),
        (
            fixture,
            &[
                "--key",
                "cluster.restart",
                "--from",
                "1.5ttl",
                "--to",
                "0.1ttl",
            ],
            "--from",
        ),
        (
            fixture,
            &["--key", "cluster.restart", "--from", "1s", "--to", "0.9ttl"],
            "one kind",
        ),
        (
            fixture,
            &[
                "--key",
                "cluster.restart",
                "--from",
                "1s",
                "--to",
                "3s",
                "--seeds",
                "0",
            ],
            "--seeds",
        ),
        (
            broken,
            &["--key", "cluster.restart", "--from", "1s", "--to", "3s"],
            "broken.toml",
        ),
    ];
    for (file, args, says) in cases {
        // No --out: the default directory would be under the working one.
        let o = Command::new(BIN)
            .current_dir(&work)
            .arg("frontier")
            .arg(file)
            .args(args)
            .output()
            .unwrap();
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let left: Vec<_> = std::fs::read_dir(&work)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("broken.toml")],
            "{args:?} wrote something"
        );
    }
}

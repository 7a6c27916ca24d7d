//! Sweeps: the same files whatever `--jobs`, shards merge into the unsharded
//! sweep, a killed sweep resumes to the same files, and the delayed-restart
//! guidance holds in a small sweep and matches the committed report.

use crate::common;

use common::runs_without_wall;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");
const SMALL: &str = "tests/data/small_sweep.toml";

fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::fresh(&format!("sim-sweep-{tag}"))
}

fn sweep(file: &str, out: &Path, extra: &[&str]) {
    let o = Command::new(BIN)
        .args(["sweep", file, "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "sweep {extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn runs_csv_is_the_same_for_one_job_and_two() {
    let out = temp_dir("jobs");
    sweep(SMALL, &out.join("j1"), &["--jobs", "1"]);
    sweep(SMALL, &out.join("j2"), &["--jobs", "2"]);
    let (a, b) = (
        runs_without_wall(&out.join("j1")),
        runs_without_wall(&out.join("j2")),
    );
    assert_eq!(a.lines().count(), 1 + 4 * 6);
    assert_eq!(a, b);
    let s1 = std::fs::read(out.join("j1/summary.csv")).unwrap();
    assert_eq!(s1, std::fs::read(out.join("j2/summary.csv")).unwrap());
    for f in [
        "report.md",
        "index.html",
        "violation_rate-cluster.restart.svg",
    ] {
        assert!(out.join("j1").join(f).is_file(), "{f} missing");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn shards_merge_into_the_unsharded_sweep() {
    let out = temp_dir("shards");
    sweep(SMALL, &out.join("all"), &["--jobs", "2"]);
    for k in 1..=3 {
        sweep(
            SMALL,
            &out.join(format!("shard{k}")),
            &["--jobs", "1", "--shard", &format!("{k}/3")],
        );
    }
    let shard_rows: usize = (1..=3)
        .map(|k| {
            runs_without_wall(&out.join(format!("shard{k}")))
                .lines()
                .count()
                - 1
        })
        .sum();
    assert_eq!(shard_rows, 24, "shards overlap or miss runs");
    let o = Command::new(BIN)
        .arg("merge")
        .args((1..=3).map(|k| out.join(format!("shard{k}"))))
        .arg("--out")
        .arg(out.join("merged"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every run is held: no partial line, no notice.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("runs:")).count(),
        1,
        "{stdout}"
    );
    let report = std::fs::read_to_string(out.join("merged/report.md")).unwrap();
    assert!(!report.contains("Partial"), "{report}");
    assert_eq!(
        runs_without_wall(&out.join("all")),
        runs_without_wall(&out.join("merged"))
    );
    assert_eq!(
        std::fs::read(out.join("all/summary.csv")).unwrap(),
        std::fs::read(out.join("merged/summary.csv")).unwrap()
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_killed_sweep_resumes_to_the_same_files() {
    let out = temp_dir("resume");
    sweep(SMALL, &out.join("whole"), &["--jobs", "1"]);
    let dir = out.join("killed");
    let mut child = Command::new(BIN)
        .args(["sweep", SMALL, "--jobs", "1", "--out"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let rows = std::fs::read_to_string(dir.join("runs.csv"))
            .map_or(0, |t| t.lines().count().saturating_sub(1));
        if rows >= 5 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the sweep made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = std::fs::read_to_string(dir.join("runs.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert!(
        kept < 24,
        "the sweep finished before it was killed ({kept} rows)"
    );
    // Resume: finished rows are kept, not run again, and the files come out the same.
    let o = Command::new(BIN)
        .args(["sweep", SMALL, "--jobs", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("({} run now)", 24 - kept)),
        "{stdout}"
    );
    assert_eq!(
        runs_without_wall(&out.join("whole")),
        runs_without_wall(&dir)
    );
    assert_eq!(
        std::fs::read(out.join("whole/summary.csv")).unwrap(),
        std::fs::read(dir.join("summary.csv")).unwrap()
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn another_sweeps_rows_are_never_dropped() {
    let out = temp_dir("foreign");
    sweep(SMALL, &out, &["--jobs", "2", "--seeds", "1..=2"]);
    let before = std::fs::read(out.join("runs.csv")).unwrap();
    // A directory of an older version, without sweep.json: its rows decide.
    std::fs::remove_file(out.join("sweep.json")).unwrap();
    let o = Command::new(BIN)
        .args(["sweep", SMALL, "--seeds", "3..=4", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    // Bad input (an --out holding other runs), nothing touched: exit 2.
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("another sweep"));
    assert_eq!(before, std::fs::read(out.join("runs.csv")).unwrap());
    // An edited scenario into the same directory is refused, its copy kept.
    let edited = out.join("edited.toml");
    let text = std::fs::read_to_string(SMALL)
        .unwrap()
        .replace("duration = \"5s\"", "duration = \"6s\"");
    std::fs::write(&edited, text).unwrap();
    let copy = std::fs::read(out.join("scenario.toml")).unwrap();
    let o = Command::new(BIN)
        .arg("sweep")
        .arg(&edited)
        .args(["--seeds", "1..=2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("different scenario"));
    assert_eq!(copy, std::fs::read(out.join("scenario.toml")).unwrap());
    assert_eq!(before, std::fs::read(out.join("runs.csv")).unwrap());
    std::fs::remove_dir_all(&out).unwrap();
}

/// The summary rows of a sweep directory: restart value -> violating runs.
fn violations_by_value(dir: &Path) -> Vec<(String, u64)> {
    let mut rd = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    rd.records()
        .map(|r| r.unwrap())
        .map(|r| (r[0].to_string(), r[2].parse().unwrap()))
        .collect()
}

#[test]
fn delayed_restart_guidance_holds_in_a_small_sweep_and_matches_the_committed_report() {
    let out = temp_dir("guidance");
    let file = "scenarios/delayed_restart_guidance.toml";
    sweep(file, &out, &["--seeds", "1..=12"]);
    let v = violations_by_value(&out);
    let at = |value: &str| {
        v.iter()
            .find(|(k, _)| k == value)
            .unwrap_or_else(|| panic!("{value} in {v:?}"))
            .1
    };
    assert!(
        at("immediate") > 0 && at("0.5ttl") > 0,
        "no violations at 0.5 TTL or below: {v:?}"
    );
    // The report's answer: with worst-case holds and aimed crashes, 0.95 TTL
    // is not enough.
    assert!(at("0.95ttl") > 0, "no violation at 0.95 TTL: {v:?}");
    for safe in ["1.0ttl", "1.1ttl", "1.5ttl"] {
        assert_eq!(at(safe), 0, "violation at {safe}: {v:?}");
    }
    // The committed report's runs for these seeds are exactly these runs.
    let committed = Path::new("reports/delayed-restart-guidance/runs.csv");
    let fresh = runs_without_wall(&out);
    let old = std::fs::read_to_string(committed).expect("the committed report's runs.csv");
    let mut header = true;
    let wanted: Vec<String> = crate::common::without_wall(&old)
        .into_iter()
        .filter(|l| {
            let keep = header
                || l.split(',')
                    .nth(1)
                    .and_then(|s| s.parse::<u64>().ok())
                    .is_some_and(|s| s <= 12);
            header = false;
            keep
        })
        .collect();
    assert_eq!(
        fresh,
        wanted.join("\n"),
        "the committed report no longer matches what the code computes"
    );
    // Every violating run the report lists links to its own report, which
    // exists, and every file the pages refer to exists.
    let links = assert_every_link_exists(&out);
    let violating: Vec<(String, String)> = std::fs::read_to_string(out.join("runs.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[3] == "violation")
        .map(|f| (f[1].to_string(), f[2].to_string()))
        .collect();
    let mut per_value: std::collections::BTreeMap<String, usize> = Default::default();
    for (seed, value) in &violating {
        let n = per_value.entry(value.clone()).or_default();
        *n += 1;
        let link = format!("runs/seed-{seed}--cluster.restart={value}/index.html");
        assert_eq!(
            links.contains(&link),
            *n <= 3,
            "{link}: the first three violating seeds of a value are linked, no other"
        );
    }
    assert!(links.iter().filter(|l| l.starts_with("runs/")).count() >= 6);
    // The waiting columns: the mean and interval of runs.csv's unavailable_ms.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.lines().next().unwrap().ends_with(
        "acquire_p99_ms,unavailable_mean_ms,unavailable_ci_low_ms,unavailable_ci_high_ms,\
         stale_in_flight_rate,stale_in_flight_ci_low,stale_in_flight_ci_high,\
         stale_sent_late_rate,stale_sent_late_ci_low,stale_sent_late_ci_high,\
         stale_in_overlap_rate,stale_in_overlap_ci_low,stale_in_overlap_ci_high,\
         inconclusive_runs"
    ));
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    for line in summary.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let waited: Vec<f64> = runs
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|r| r[2] == f[0])
            .map(|r| r[12].parse().unwrap())
            .collect();
        let mean = waited.iter().sum::<f64>() / waited.len() as f64;
        let (m, lo, hi): (f64, f64, f64) = (
            f[9].parse().unwrap(),
            f[10].parse().unwrap(),
            f[11].parse().unwrap(),
        );
        assert!((m - mean).abs() < 0.001, "{line}: mean {mean}");
        assert!(lo <= m && m <= hi && lo >= 0.0, "{line}");
        // Each kind's rate: the share of the value's runs with one such
        // stale write (runs.csv's columns 15 to 17), within its interval.
        let rows: Vec<Vec<&str>> = runs
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|r| r[2] == f[0])
            .collect();
        for k in 0..3 {
            let with = rows.iter().filter(|r| r[15 + k] != "0").count();
            let rate: f64 = f[12 + 3 * k].parse().unwrap();
            let (lo, hi): (f64, f64) = (
                f[13 + 3 * k].parse().unwrap(),
                f[14 + 3 * k].parse().unwrap(),
            );
            assert!(
                (rate - with as f64 / rows.len() as f64).abs() < 1e-6,
                "{line}: kind {k}"
            );
            assert!(lo <= rate && rate <= hi, "{line}: kind {k}");
        }
        for r in &rows {
            let split: u64 = r[15..18].iter().map(|v| v.parse::<u64>().unwrap()).sum();
            assert_eq!(
                split,
                r[6].parse::<u64>().unwrap(),
                "{r:?}: the kinds add up"
            );
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Every relative file `index.html` and `report.md` of `dir` refer to (links,
/// images) exists; the same for the run reports they link to. Returns the
/// links of `dir/index.html`.
fn assert_every_link_exists(dir: &Path) -> Vec<String> {
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let mut refs = Vec::new();
    for (text, open, close) in [
        (&html, "href=\"", '"'),
        (&html, "src=\"", '"'),
        (&md, "](<", '>'),
    ] {
        for part in text.split(open).skip(1) {
            let r = part.split(close).next().unwrap();
            if !(r.starts_with("http") || r.starts_with('#') || r.starts_with("data:")) {
                refs.push(percent_decode(r));
            }
        }
    }
    assert!(!refs.is_empty(), "no links in {}", dir.display());
    for r in &refs {
        assert!(
            dir.join(r).is_file(),
            "{}: {r} does not exist",
            dir.display()
        );
    }
    let html_links: Vec<String> = html
        .split("href=\"")
        .skip(1)
        .map(|p| percent_decode(p.split('"').next().unwrap()))
        .collect();
    for l in &html_links {
        // A run report: its own files, and its trace is the one in runs.csv.
        if l.starts_with("runs/") {
            let run = dir.join(l).parent().unwrap().to_path_buf();
            for f in ["history.csv", "summary.json", "report.md", "timeline.svg"] {
                assert!(run.join(f).is_file(), "{}: {f} missing", run.display());
            }
            let json = std::fs::read_to_string(run.join("summary.json")).unwrap();
            let trace = json
                .split("\"trace\": \"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            // The row of this seed and value (`runs/seed-S--key=V/`).
            let name = run.file_name().unwrap().to_string_lossy().into_owned();
            let (seed, value) = name
                .strip_prefix("seed-")
                .and_then(|n| n.split_once("--"))
                .and_then(|(seed, set)| Some((seed, set.split_once('=')?.1)))
                .unwrap_or_else(|| panic!("{name}: not seed-S--key=V"));
            let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
            let row: Vec<&str> = runs
                .lines()
                .map(|r| r.split(',').collect::<Vec<_>>())
                .find(|r| r[1] == seed && r[2] == value)
                .unwrap_or_else(|| panic!("{l}: no row of seed {seed} at {value}"))
                .to_vec();
            assert_eq!(row[3], "violation", "{l}");
            assert_eq!(row[13], trace, "{l}: the report's trace is not its row's");
        }
    }
    html_links
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn a_sweep_run_replays_exactly_with_run_seed_and_set() {
    let out = temp_dir("replay");
    sweep(SMALL, &out, &["--seeds", "1..=3"]);
    let text = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in text.lines().skip(1).step_by(5) {
        let f: Vec<&str> = line.split(',').collect();
        let o = Command::new(BIN)
            .args(["run", SMALL, "--seed", f[1]])
            .args([
                "--set",
                &format!("cluster.restart={}", f[col("cluster.restart")]),
            ])
            .args([
                "--set",
                &format!("cluster.nodes={}", f[col("cluster.nodes")]),
            ])
            .arg("--out")
            .arg(out.join("replay"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains(&format!("trace: {}", f[col("trace")])),
            "{line}\n{stdout}"
        );
        assert!(
            stdout.contains(&format!("verdict: {}", f[col("verdict")])),
            "{line}\n{stdout}"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

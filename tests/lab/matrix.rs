//! `redlock-sim matrix`: a small matrix (two libraries of two kinds, two
//! faults, two seeds) through the binary: its files, its answer, its links,
//! a rerun that reads the cells back, and a bad file refused.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

fn matrix(out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args([
            "matrix",
            "tests/data/lab/matrix_small.toml",
            "--jobs",
            "2",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .output()
        .expect("the binary runs")
}

#[test]
fn a_small_matrix_answers_links_its_cells_and_resumes() {
    super::runs::python();
    let dir = std::env::temp_dir().join(format!("redlock-matrix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = matrix(&dir, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("redis-py Lock 8.1.0 (Python) broke under failover race (2/2)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("broke under node restarts empty at once (2/2)"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(dir.join("matrix.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "library,version,language,scenario,runs,violating_runs,violation_rate,ci_low,ci_high,acquisitions_per_run,kind,runs_with_overlap,runs_with_stale_write,file,runs_with_stale_in_flight,runs_with_stale_sent_late,runs_with_stale_in_overlap,conclusive_runs"
    );
    assert_eq!(
        lines.len(),
        3,
        "two cells, no row for what is not a cell: {csv}"
    );
    // Every run with a stale write had one of some kind, and no more runs
    // had one of a kind than had one at all.
    for line in &lines[1..] {
        let f: Vec<&str> = line.split(',').collect();
        let n = |i: usize| f[i].parse::<u64>().unwrap();
        let kinds = [n(14), n(15), n(16)];
        assert!(kinds.iter().sum::<u64>() >= n(12), "{line}");
        assert!(kinds.iter().all(|k| *k <= n(12)), "{line}");
        // Every run of these cells tested what its scenario is for.
        assert_eq!(n(17), n(4), "every run conclusive: {line}");
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // Each library broke: the report says which way of getting late led.
    for lib in ["redis-py Lock 8.1.0", "client built-in"] {
        let said = report.lines().any(|l| {
            l.contains(lib)
                && ["mostly ", " equally (", "no stale write"]
                    .iter()
                    .any(|w| l.contains(w))
        });
        assert!(said, "{lib}:\n{report}");
    }
    assert!(report.contains("## Not cells"), "{report}");
    assert!(
        report.contains("Redlock's masters are independent"),
        "{report}"
    );
    // Every violating cell links a run report that exists.
    let link = "redis-py-lock-8.1.0/failover-race/seed-1/index.html";
    assert!(report.contains(link), "{report}");
    assert!(dir.join(link).exists());
    assert!(std::fs::read_to_string(dir.join("matrix.svg"))
        .unwrap()
        .contains("2/2"));
    // A rerun reads the cells back: no lab run, the same matrix.
    let kept = std::fs::metadata(dir.join("redis-py-lock-8.1.0/failover-race/runs.csv"))
        .unwrap()
        .modified()
        .unwrap();
    let again = matrix(&dir, &[]);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&again.stderr).trim().is_empty(),
        "nothing ran again"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("matrix.csv")).unwrap(),
        csv
    );
    let now = std::fs::metadata(dir.join("redis-py-lock-8.1.0/failover-race/runs.csv"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(kept, now);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_matrix_file_is_exit_2_naming_the_line_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("redlock-matrix-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string("tests/data/lab/matrix_small.toml").unwrap();
    for (bad, want) in [
        (
            text.replace("kind = \"single\"", "kind = \"many\""),
            "m.toml:16",
        ),
        (text.replace("not_redlock = ", "# "), "fault[1].not_redlock"),
        (
            text.replace("seeds = \"1..=2\"", "seeds = \"2..=1\""),
            "m.toml:3: seeds",
        ),
        (
            text.replace("tests/data/lab/failover_race.toml", "nope.toml"),
            "nope.toml",
        ),
        // A library's settings: KEY=VALUE, each a key of the scenario.
        (
            text.replace(
                "kind = \"single\"",
                "kind = \"single\"\nset = [\"fencing\"]",
            ),
            "m.toml:17: library[1].set",
        ),
        (
            text.replace(
                "kind = \"single\"",
                "kind = \"single\"\nset = [\"clients.fenced=true\"]",
            ),
            "clients.fenced",
        ),
    ] {
        let file = dir.join("m.toml");
        std::fs::write(&file, bad).unwrap();
        let out = dir.join("out");
        let o = Command::new(BIN)
            .arg("matrix")
            .arg(&file)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "expected {want} in: {err}");
        assert!(!out.exists(), "nothing written: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

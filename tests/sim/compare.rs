//! `redlock-sim compare`: two library matrices side by side. The committed
//! reports/node-vs-redis/ is what the command makes of the committed
//! matrices, the node's (reports/libraries-node/) and real Redis's
//! (reports/libraries/): a matrix regenerated without it fails here; a hand-made pair
//! pins the figures (inconclusive runs count on neither side, a side with
//! no conclusive run is unknown); bad input is exit 2 with nothing written.

use crate::common::Scratch;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

fn compare(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_committed_agreement_is_what_compare_makes_of_the_committed_matrices() {
    let out = Scratch::dir("compare-committed");
    let committed = Path::new("reports/node-vs-redis");
    std::fs::copy(committed.join("notes.md"), out.join("notes.md")).unwrap();
    let o = compare(&[
        "reports/libraries-node",
        "reports/libraries",
        "--out",
        out.to_str().unwrap(),
        "--names",
        "node,redis",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("agreement.csv")).unwrap();
    assert_eq!(
        csv,
        std::fs::read_to_string(committed.join("agreement.csv")).unwrap(),
        "reports/node-vs-redis/agreement.csv is stale: TABLE_ONLY=1 bash scripts/node-vs-redis.sh"
    );
    // The page names its command with the scratch directory; the rest is
    // the committed page.
    let page = std::fs::read_to_string(out.join("README.md")).unwrap();
    let page = page.replace(out.to_str().unwrap(), "reports/node-vs-redis");
    assert_eq!(
        page,
        std::fs::read_to_string(committed.join("README.md")).unwrap()
    );
}

const HEADER: &str = "scenario,seed,verdict,lock_overlaps,write_interleavings,stale_writes,rejected_writes,attempts,acquisitions,acquire_p50_ms,acquire_p99_ms,unavailable_ms,trace,wall_ms,stale_in_flight,stale_sent_late,stale_in_overlap,inconclusive";

/// A matrix directory with one cell, `lib 1.0` under `crash`, whose runs
/// are `verdicts` (seed 1 first; `inconclusive` gets a cause).
fn matrix(dir: &Path, verdicts: &[&str]) {
    std::fs::write(
        dir.join("matrix.csv"),
        "library,version,language,scenario,runs\nlib,1.0,Python,crash,0\n",
    )
    .unwrap();
    let cell = dir.join("lib-1.0/crash");
    std::fs::create_dir_all(&cell).unwrap();
    let mut csv = format!("{HEADER}\n");
    for (i, v) in verdicts.iter().enumerate() {
        let (overlaps, cause) = match *v {
            "violation" => (1, ""),
            "inconclusive" => (0, "no acquisition"),
            _ => (0, ""),
        };
        csv += &format!(
            "s,{},{v},{overlaps},0,0,0,,1,,,,t,{},0,0,0,{cause}\n",
            i + 1,
            1000 * (i + 1)
        );
    }
    std::fs::write(cell.join("runs.csv"), csv).unwrap();
}

#[test]
fn inconclusive_runs_count_on_neither_side_and_none_conclusive_is_unknown() {
    let (a, b, out) = (
        Scratch::dir("cmp-a"),
        Scratch::dir("cmp-b"),
        Scratch::fresh("cmp-out"),
    );
    matrix(&a, &["violation", "inconclusive", "safe", "violation"]);
    // b ran seeds 1..=3 only: seed 4 is compared on neither side.
    matrix(&b, &["safe", "safe", "inconclusive"]);
    let args = [
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = compare(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("agreement.csv")).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    // library,version,language,fault,seeds,runs,a_violating,a_ci_low,a_ci_high,b_...
    assert_eq!(
        &row[..7],
        ["lib", "1.0", "Python", "crash", "1..=3", "3", "1"]
    );
    assert_eq!(row[12], "yes", "{csv}");
    assert_eq!(&row[row.len() - 2..], ["2", "2"], "conclusive runs: {csv}");
    let page = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(page.contains("| lib 1.0 | crash | 1/2 |"), "{page}");
    // No conclusive run on b: unknown, never an overlap.
    matrix(&b, &["inconclusive"]);
    let o = compare(&args);
    assert!(o.status.success());
    let csv = std::fs::read_to_string(out.join("agreement.csv")).unwrap();
    assert!(csv.lines().nth(1).unwrap().contains(",unknown,"), "{csv}");
    let page = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        page.contains("overlap in 0 of 0 cells.** 1 unknown"),
        "{page}"
    );
}

#[test]
fn a_directory_without_a_matrix_or_bad_names_is_exit_2_with_nothing_written() {
    let (a, b, out) = (
        Scratch::dir("cmp-bad-a"),
        Scratch::dir("cmp-bad-b"),
        Scratch::fresh("cmp-bad-out"),
    );
    matrix(&a, &["safe"]);
    let o = compare(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(b.to_str().unwrap()) && err.contains("matrix.csv"),
        "{err}"
    );
    assert!(!out.exists());
    matrix(&b, &["safe"]);
    for names in ["x", "x,x", "a,b,c", "a b,c"] {
        let o = compare(&[
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--names",
            names,
        ]);
        assert_eq!(o.status.code(), Some(2), "--names {names}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--names"),
            "--names {names}"
        );
        assert!(!out.exists(), "--names {names}");
    }
}

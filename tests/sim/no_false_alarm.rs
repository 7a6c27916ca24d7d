//! No false alarm: every shipped scenario that expects `safe` is safe over
//! at least 1,000 seeds. The sweep itself is committed
//! (`reports/no-false-alarms/`, made by `redlock-sim sweep --strict --expect
//! safe`, see docs/testing.md); this test checks that it covers every safe
//! shipped scenario as shipped today, that it holds no violation, and
//! replays a slice of it (five seeds per scenario, spread over the range),
//! which must give the committed rows: the same verdict, figures and trace.
//! A change that moves any of those runs, or a scenario changed without
//! regenerating the report, fails here in seconds.

use redlock_harness::scenario::{self, Expect};
use redlock_harness::sweep::rows::{self, RunRow};
use redlock_harness::sweep::Plan;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const REPORT: &str = "reports/no-false-alarms";
const MIN_SEEDS: usize = 1000;
const REGENERATE: &str = "cargo run --release -- sweep --strict --expect safe --seeds 1..=1000 \
                          --out reports/no-false-alarms scenarios/*.toml";

/// The shipped scenarios that expect `safe` (what `--expect safe` picks):
/// file and name. None of them varies a key today; one that does needs this
/// test to read its combinations.
fn safe_shipped() -> Vec<(PathBuf, String)> {
    crate::common::shipped_scenarios()
        .into_iter()
        .filter_map(|f| {
            let s = scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
            let safe = s.expect == Expect::Safe;
            assert!(
                !safe || s.sweep.is_none(),
                "{}: a safe scenario with [sweep]: extend this test to its combinations",
                f.display()
            );
            safe.then_some((f, s.name))
        })
        .collect()
}

/// The committed set summary: scenario name -> (runs, violating runs).
fn committed_summary() -> BTreeMap<String, (u64, u64)> {
    let path = Path::new(REPORT).join("summary.csv");
    let mut rd = csv::Reader::from_path(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; regenerate with {REGENERATE}", path.display()));
    let head = rd.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (scenario, runs, violating) = (col("scenario"), col("runs"), col("violating_runs"));
    rd.records()
        .map(|r| {
            let r = r.unwrap();
            let n = |i: usize| r[i].parse::<u64>().unwrap();
            (r[scenario].to_string(), (n(runs), n(violating)))
        })
        .collect()
}

#[test]
fn the_committed_sweep_covers_every_safe_scenario_without_a_violation() {
    let safe = safe_shipped();
    assert!(safe.len() >= 7, "safe scenarios missing: {safe:?}");
    let summary = committed_summary();
    let names: Vec<&String> = safe.iter().map(|(_, n)| n).collect();
    assert_eq!(
        summary.keys().collect::<Vec<_>>(),
        {
            let mut n = names.clone();
            n.sort();
            n
        },
        "{REPORT} must sweep exactly the safe shipped scenarios; regenerate with {REGENERATE}"
    );
    for (file, name) in &safe {
        let (runs, violating) = summary[name];
        assert!(runs >= MIN_SEEDS as u64, "{name}: {runs} runs");
        assert_eq!(violating, 0, "{name}: false alarms in the committed sweep");
        // The report is of the file as shipped today.
        let dir = Path::new(REPORT).join(name);
        let copy = std::fs::read_to_string(dir.join("scenario.toml")).unwrap();
        let shipped = std::fs::read_to_string(file).unwrap();
        assert_eq!(
            copy,
            shipped,
            "{} changed since {REPORT}/{name} was swept; regenerate with {REGENERATE}",
            file.display()
        );
        let rows = committed_rows(name);
        assert_eq!(rows.len() as u64, runs, "{name}: summary.csv and runs.csv");
        let seeds: Vec<u64> = rows.iter().map(|r| r.seed).collect();
        assert_eq!(seeds, (1..=rows.len() as u64).collect::<Vec<_>>(), "{name}");
        assert!(rows.len() >= MIN_SEEDS, "{name}: {} rows", rows.len());
        // A run that tested nothing is inconclusive, never a violation.
        assert!(
            rows.iter().all(
                |r| (r.verdict == "safe" || r.verdict == "inconclusive") && r.stale_writes == 0
            ),
            "{name}: a committed row is not safe"
        );
        let conclusive = rows.iter().filter(|r| r.verdict == "safe").count();
        assert!(
            conclusive >= MIN_SEEDS * 9 / 10,
            "{name}: {conclusive} conclusive rows"
        );
    }
}

/// The committed rows of one scenario's sweep.
fn committed_rows(name: &str) -> Vec<RunRow> {
    let path = Path::new(REPORT).join(name).join("runs.csv");
    let rows = rows::read(&path, &[])
        .unwrap_or_else(|e| panic!("{}: {e}; regenerate with {REGENERATE}", path.display()));
    assert!(
        !rows.is_empty(),
        "{}: no rows; regenerate with {REGENERATE}",
        path.display()
    );
    rows
}

/// Five seeds of a sweep of `n`: the first, the last and three between.
fn slice(n: usize) -> Vec<u64> {
    let n = n as u64;
    let mut s = vec![1, n / 4, n / 2, 3 * n / 4, n];
    s.retain(|&x| x >= 1);
    s.dedup();
    s
}

/// A row's fields but `wall_ms` (the only one that depends on the machine).
fn replayable(r: &RunRow) -> Vec<String> {
    r.replayable_fields()
}

#[test]
fn a_slice_of_the_committed_sweep_replays_to_the_same_rows() {
    let mut work = Vec::new();
    for (file, name) in safe_shipped() {
        let rows = committed_rows(&name);
        for seed in slice(rows.len()) {
            work.push((file.clone(), rows[seed as usize - 1].clone()));
        }
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunks: Vec<Vec<(PathBuf, RunRow)>> = (0..threads)
        .map(|t| work.iter().skip(t).step_by(threads).cloned().collect())
        .collect();
    let handles: Vec<_> = chunks
        .into_iter()
        .map(|chunk| {
            std::thread::Builder::new()
                .stack_size(16 << 20)
                .spawn(move || {
                    let mut moved = Vec::new();
                    for (file, want) in chunk {
                        let plan = Plan::load(&file, Some(want.seed..=want.seed)).unwrap();
                        let got = plan.run_one(0, Default::default()).unwrap();
                        if replayable(&got) != replayable(&want) {
                            moved.push(format!(
                                "{} seed {}:\n  committed {:?}\n  now       {:?}",
                                file.display(),
                                want.seed,
                                replayable(&want),
                                replayable(&got)
                            ));
                        }
                    }
                    moved
                })
                .unwrap()
        })
        .collect();
    let moved: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert!(
        moved.is_empty(),
        "runs of the committed false-alarm sweep moved (regenerate with {REGENERATE} \
         --fresh, and say in the commit why they moved):\n{}",
        moved.join("\n")
    );
    assert!(work.len() >= 5 * 7, "{} runs replayed", work.len());
}

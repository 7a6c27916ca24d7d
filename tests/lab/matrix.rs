//! `redlock-sim matrix`: a small matrix (two libraries of two kinds, two
//! faults, two seeds) through the binary: its files, its answer, its links,
//! a rerun that reads the cells back, a cell cut short that goes on after
//! the runs it finished, `--keep-runs first` pruning what it read back,
//! and a bad file refused.

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
    // At --jobs 2 the two cells ran side by side, a run of each at once
    // (not a cell's two seeds, then the other's): each cell's first run
    // (4 s and 5 s of scenario) ended before either's second.
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let ended: Vec<&str> = (stderr.lines())
        .filter(|l| l.contains(": seed "))
        .map(|l| l.split(": seed ").next().unwrap_or(""))
        .collect();
    assert_eq!(ended.len(), 4, "{stderr}");
    assert_ne!(
        ended[0], ended[1],
        "the cells ran one after the other: {stderr}"
    );
    let csv = std::fs::read_to_string(dir.join("matrix.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "library,version,language,scenario,runs,violating_runs,violation_rate,ci_low,ci_high,acquisitions_per_run,kind,runs_with_overlap,runs_with_stale_write,file,runs_with_stale_in_flight,runs_with_stale_sent_late,runs_with_stale_in_overlap,conclusive_runs,stopped"
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
        // Two seeds settle nothing: each cell ran its budget.
        assert_eq!(f[18], "budget", "{line}");
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
    the_gate_reads_its_own_matrix_and_names_a_regression(&dir, &csv);
    an_interrupted_cell_goes_on_after_the_runs_it_finished(&dir);
    keeping_the_first_run_prunes_the_others_and_links_only_what_is_there(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--keep-runs first` on the finished matrix in `dir`: nothing runs,
/// each cell keeps its first violating run's report alone and its report
/// lists the other violating seeds without a link; a cell whose first
/// run's report is lost links none, in its report or the matrix's; and a
/// budget grown to three seeds goes on from the runs runs.csv lists (their
/// directories pruned) and prunes the new run.
fn keeping_the_first_run_prunes_the_others_and_links_only_what_is_there(dir: &Path) {
    let cells = [
        "redis-py-lock-8.1.0/failover-race",
        "redlock-sim-s-client-built-in/node-restarts-empty-at-once",
    ];
    let csv = std::fs::read_to_string(dir.join("matrix.csv")).unwrap();
    let runs_before: Vec<String> = cells
        .iter()
        .map(|c| std::fs::read_to_string(dir.join(c).join("runs.csv")).unwrap())
        .collect();
    let o = matrix(dir, &["--keep-runs", "first"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("seed "), "nothing ran again: {stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.join("matrix.csv")).unwrap(),
        csv
    );
    for (c, before) in cells.iter().zip(&runs_before) {
        let cell = dir.join(c);
        assert_eq!(
            &std::fs::read_to_string(cell.join("runs.csv")).unwrap(),
            before
        );
        let violating = violating_seeds(&cell);
        let Some((first, rest)) = violating.split_first() else {
            panic!("{c}: the cell violated 2/2 in its first run: {before}");
        };
        assert_eq!(run_dirs(&cell), std::slice::from_ref(first), "{c}");
        let report = std::fs::read_to_string(cell.join("report.md")).unwrap();
        assert!(
            report.contains(&format!("(<seed-{first}/index.html>)")),
            "{c}:\n{report}"
        );
        for s in rest {
            assert!(!report.contains(&format!("seed-{s}/")), "{c}:\n{report}");
            let unlinked = format!("seed {s} (its run report was not kept)");
            assert!(report.contains(&unlinked), "{c}:\n{report}");
        }
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("--keep-runs first"), "{report}");
    // The first run's report lost: no link to it anywhere.
    let lost = &violating_seeds(&dir.join(cells[0]))[0];
    std::fs::remove_dir_all(dir.join(cells[0]).join(format!("seed-{lost}"))).unwrap();
    let o = matrix(dir, &["--keep-runs", "first"]);
    assert_eq!(o.status.code(), Some(0));
    let cell = std::fs::read_to_string(dir.join(cells[0]).join("report.md")).unwrap();
    assert!(!cell.contains(&format!("seed-{lost}/")), "{cell}");
    let unlinked = format!("seed {lost} (its run report was not kept)");
    assert!(cell.contains(&unlinked), "{cell}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains(&unlinked), "{report}");
    assert!(!report.contains(&format!("{}/seed-", cells[0])), "{report}");
    assert!(report.contains(&format!("{}/seed-", cells[1])), "{report}");
    // A budget of three: seed 3 alone runs, after the two runs.csv lists.
    let o = matrix(dir, &["--keep-runs", "first", "--seeds", "1..=3"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr
            .matches("going on after the 2 runs it had finished")
            .count(),
        2,
        "{stderr}"
    );
    assert!(
        !stderr.contains("seed 1: ") && !stderr.contains("seed 2: "),
        "{stderr}"
    );
    for c in cells {
        let cell = dir.join(c);
        assert_eq!(seeds(&cell), ["1", "2", "3"], "{c}");
        let kept: Vec<String> = violating_seeds(&cell)
            .into_iter()
            .filter(|s| cell.join(format!("seed-{s}/index.html")).is_file())
            .take(1)
            .collect();
        assert_eq!(
            run_dirs(&cell),
            kept,
            "{c}: only the first violating run's report"
        );
    }
}

/// The violating seeds of a cell's runs.csv, in order.
fn violating_seeds(cell: &Path) -> Vec<String> {
    seeds_where(cell, |verdict| verdict == "violation")
}

/// The seeds of a cell's run directories (`seed-<N>/`), in order.
fn run_dirs(cell: &Path) -> Vec<String> {
    let mut seeds: Vec<u64> = std::fs::read_dir(cell)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_prefix("seed-")?.parse().ok()
        })
        .collect();
    seeds.sort_unstable();
    seeds.iter().map(u64::to_string).collect()
}

/// A cell cut short while its second run was being written (no
/// `runs.csv`, no `index.html` for seed 2): a rerun keeps seed 1's run as
/// it was and runs seed 2 alone.
fn an_interrupted_cell_goes_on_after_the_runs_it_finished(dir: &Path) {
    let cell = dir.join("redlock-sim-s-client-built-in/node-restarts-empty-at-once");
    let first = cell.join("seed-1/summary.json");
    let kept = std::fs::read_to_string(&first).unwrap();
    let when = std::fs::metadata(&first).unwrap().modified().unwrap();
    std::fs::remove_file(cell.join("runs.csv")).unwrap();
    std::fs::remove_file(cell.join("seed-2/index.html")).unwrap();
    let o = matrix(dir, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("going on after the 1 runs it had finished"),
        "{stderr}"
    );
    assert!(stderr.contains("seed 2: "), "{stderr}");
    assert!(!stderr.contains("seed 1: "), "seed 1 ran again: {stderr}");
    assert_eq!(std::fs::read_to_string(&first).unwrap(), kept);
    assert_eq!(std::fs::metadata(&first).unwrap().modified().unwrap(), when);
    assert!(cell.join("seed-2/index.html").is_file());
    assert_eq!(seeds(&cell), ["1", "2"]);
}

/// `--baseline` on the matrix in `dir` (read back, nothing runs): its own
/// matrix.csv passes; one where a cell that now violates had no violating
/// run fails naming it; one without a column is exit 2 naming it.
fn the_gate_reads_its_own_matrix_and_names_a_regression(dir: &Path, csv: &str) {
    let base = dir.join("baseline.csv");
    std::fs::write(&base, csv).unwrap();
    let o = matrix(dir, &["--baseline", base.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("baseline: 2 cells compared, 0 regressed"),
        "{stdout}"
    );
    // The failover race's cell safe in the baseline: 0 of 2, 0-66%.
    let safe: String = csv
        .lines()
        .map(|l| match l.starts_with("redis-py Lock,") {
            true => {
                let mut f: Vec<String> = l.split(',').map(str::to_string).collect();
                f[5] = "0".into();
                f[6] = "0.000000".into();
                f[7] = "0.000000".into();
                f[8] = "0.657620".into();
                f.join(",")
            }
            false => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    std::fs::write(&base, safe).unwrap();
    let o = matrix(dir, &["--baseline", base.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("regression: redis-py Lock 8.1.0 under failover race: no violating run in the baseline (0/2), now 2/2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("baseline: 2 cells compared, 1 regressed"),
        "{stdout}"
    );
    let no_column = csv.replacen("ci_high,", "ci_top,", 1);
    std::fs::write(&base, no_column).unwrap();
    let before = std::fs::read_to_string(dir.join("matrix.csv")).unwrap();
    std::fs::remove_file(dir.join("matrix.csv")).unwrap();
    let o = matrix(dir, &["--baseline", base.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("baseline.csv: no column `ci_high`"),
        "{stderr}"
    );
    assert!(!dir.join("matrix.csv").exists(), "nothing written");
    std::fs::write(dir.join("matrix.csv"), before).unwrap();
}

/// The cells and runs of a matrix.csv, without what a lab run's timing
/// moves: library, version, fault, runs, violating runs, conclusive runs,
/// why it stopped.
fn cells_and_runs(csv: &str) -> Vec<String> {
    csv.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [f[0], f[1], f[3], f[4], f[5], f[17], f[18]].join(",")
        })
        .collect()
}

/// The seeds of a cell's runs.csv.
fn seeds(cell: &Path) -> Vec<String> {
    seeds_where(cell, |_| true)
}

/// The seeds of a cell's runs.csv whose verdict passes `keep`, in order.
fn seeds_where(cell: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let runs = std::fs::read_to_string(cell.join("runs.csv")).unwrap();
    runs.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| keep(f[2]))
        .map(|f| f[1].to_string())
        .collect()
}

#[test]
fn a_matrix_run_whole_and_as_two_merged_shards_gives_the_same_cells() {
    super::runs::python();
    let dir = std::env::temp_dir().join(format!("redlock-matrix-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (whole, sharded) = (dir.join("whole"), dir.join("sharded"));
    let o = matrix(&whole, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The GNU parallel recipe: both shards at once, then the merge.
    assert!(
        Command::new("parallel")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "GNU parallel is missing: `bash scripts/test.sh` installs it (apt-get install parallel)"
    );
    let o = Command::new("bash")
        .args([
            "scripts/matrix-shards.sh",
            "tests/data/lab/matrix_small.toml",
            "2",
        ])
        .arg(&sharded)
        .args(["--", "--jobs", "2"])
        .env("SHARDS_AT_ONCE", "2")
        .env("REDLOCK_SIM", BIN)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (s1, s2, merged) = (
        sharded.join("shard-1"),
        sharded.join("shard-2"),
        sharded.join("merged"),
    );
    // Disjoint: each shard ran one of the two cells, and says it is a part.
    let (a, b) = (
        "redlock-sim-s-client-built-in/node-restarts-empty-at-once",
        "redis-py-lock-8.1.0/failover-race",
    );
    assert!(s1.join(a).join("runs.csv").exists() && !s1.join(b).exists());
    assert!(s2.join(b).join("runs.csv").exists() && !s2.join(a).exists());
    let part = std::fs::read_to_string(s1.join("report.md")).unwrap();
    assert!(
        part.contains(
            "Part of the matrix: 1 of its 2 cells are here; the others are in shard 2 of 2"
        ),
        "{part}"
    );
    let merged_report = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(
        !merged_report.contains("Part of the matrix"),
        "{merged_report}"
    );
    // The shards say what served them, and so does their merge.
    let mark = std::fs::read_to_string(s1.join("matrix-shard.toml")).unwrap();
    assert!(mark.contains("servers = \"node\""), "{mark}");
    let whole_report = std::fs::read_to_string(whole.join("report.md")).unwrap();
    for report in [&part, &merged_report, &whole_report] {
        assert!(
            report.contains("Served by the project's node (`--servers node`)"),
            "{report}"
        );
    }
    // Each cell records its servers; the matrix read back with others is
    // refused before anything is written, naming the cell's record.
    let served = whole.join(a).join("servers.txt");
    assert_eq!(std::fs::read_to_string(&served).unwrap(), "node\n");
    let o = matrix(&whole, &["--servers", "redis"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("servers.txt: the cell's runs were served by node, and --servers redis"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(whole.join("report.md")).unwrap(),
        whole_report,
        "nothing written"
    );
    assert_eq!(std::fs::read_to_string(&served).unwrap(), "node\n");
    let csv = |d: &Path| std::fs::read_to_string(d.join("matrix.csv")).unwrap();
    assert_eq!(cells_and_runs(&csv(&merged)), cells_and_runs(&csv(&whole)));
    for cell in [a, b] {
        assert_eq!(
            seeds(&merged.join(cell)),
            seeds(&whole.join(cell)),
            "{cell}"
        );
    }
    // One shard alone: a merge that lacks the other says so.
    let half = dir.join("half");
    let o = Command::new(BIN)
        .arg("merge")
        .arg(&s1)
        .arg("--out")
        .arg(&half)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("1 of its 2 cells are here; the others are in shard 2 of 2"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shards_are_exit_2_naming_the_flag_or_the_directories_and_write_nothing() {
    for bad in ["0/2", "3/2", "1/0", "one/2", "1-2"] {
        let dir = std::env::temp_dir().join(format!("redlock-shard-flag-{}", std::process::id()));
        let o = matrix(&dir, &["--shard", bad]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--shard"), "{bad}: {err}");
        assert!(!dir.exists(), "nothing written for {bad}");
    }
    let dir = std::env::temp_dir().join(format!("redlock-shard-merge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let text = std::fs::read_to_string("tests/data/lab/matrix_small.toml").unwrap();
    let mark = |name: &str, shard: &str, text: &str, servers: Option<&str>| {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let mut t = toml::Table::new();
        t.insert("shard".into(), shard.into());
        t.insert("seeds".into(), "1..=2".into());
        if let Some(s) = servers {
            t.insert("servers".into(), s.into());
        }
        t.insert("matrix".into(), text.into());
        std::fs::write(d.join("matrix-shard.toml"), t.to_string()).unwrap();
        d
    };
    let node = Some("node");
    let one = mark("one", "1/2", &text, node);
    let two_of_three = mark("two-of-three", "2/3", &text, node);
    let one_again = mark("one-again", "1/2", &text, node);
    let other = mark("other", "2/2", &text.replace("two seeds", "2 seeds"), node);
    let on_redis = mark("on-redis", "2/2", &text, Some("redis"));
    let unrecorded = mark("unrecorded", "2/2", &text, None);
    let bad_servers = mark("bad-servers", "2/2", &text, Some("valkey"));
    let plain = dir.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    for (dirs, want) in [
        (vec![&one, &two_of_three], "is a shard of 2 and"),
        (vec![&one, &one_again], "are both shard 1/2"),
        (vec![&one, &other], "are shards of different matrices"),
        (
            vec![&one, &on_redis],
            "ran on different servers (node and redis",
        ),
        (
            vec![&one, &unrecorded],
            "ran on different servers (node and not recorded",
        ),
        (
            vec![&one, &bad_servers],
            "`servers` is neither node nor redis",
        ),
        (vec![&one, &plain], "plain/matrix-shard.toml"),
    ] {
        let out = dir.join("out");
        let o = Command::new(BIN)
            .arg("merge")
            .args(&dirs)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "expected {want} in: {err}");
        let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        assert!(
            names.iter().any(|n| err.contains(n.as_str())),
            "names a directory: {err}"
        );
        assert!(!out.exists(), "nothing written: {err}");
    }
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
        // A cell stops early on 10 violating runs at the fewest.
        (
            text.replace(
                "seeds = \"1..=2\"",
                "seeds = \"1..=2\"\nviolating_after = 5",
            ),
            "m.toml:4: violating_after: 5: a cell stops early on 10 violating runs at the fewest",
        ),
        // A weight: slots of --jobs, at least one; a number.
        (
            text.replace("kind = \"single\"", "kind = \"single\"\nweight = 0"),
            "m.toml:17: library[1].weight: 0: a run takes at least one slot of --jobs",
        ),
        (
            text.replace("kind = \"single\"", "kind = \"single\"\nweight = \"heavy\""),
            "m.toml:17",
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

/// A matrix file's `violating_after`: a cell that stopped at 10 of 10
/// goes on from seed 11 when the file asks for 12, its first ten runs
/// kept as they were, and says so; with the key gone again, the runs past
/// the default's stop are dropped, their directories removed. And the
/// command a cell recorded (`command.json`): read back under a file that
/// now gives another, the cell keeps the command it ran in its report,
/// the matrix's report names it, and going on with the other is refused.
#[test]
fn violating_after_makes_a_settled_cell_go_on_and_a_cell_keeps_its_command() {
    let dir = std::env::temp_dir().join(format!("redlock-matrix-after-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = |after: &str, extra: &str| {
        format!(
            "name = \"after\"\ndescription = \"violating_after's test\"\nseeds = \"1..=14\"\n{after}\n\
             [[library]]\nname = \"redlock-sim's client\"\nversion = \"built-in\"\n\
             language = \"Rust\"\nkind = \"redlock\"\ncommand = [{BIN:?}, \"lab-client\"{extra}]\n\n\
             [[fault]]\nname = \"restart\"\nredlock = \"tests/data/lab/crash_restart.toml\"\n\
             not_single = \"none\"\n"
        )
    };
    let (file, out) = (dir.join("m.toml"), dir.join("out"));
    let cell = out.join("redlock-sim-s-client-built-in/restart");
    let matrix = |after: &str, extra: &str| {
        std::fs::write(&file, text(after, extra)).unwrap();
        let o = Command::new(BIN)
            .arg("matrix")
            .arg(&file)
            .args(["--jobs", "4", "--out"])
            .arg(&out)
            .output()
            .expect("the binary runs");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let run = |after: &str| {
        let (code, err) = matrix(after, "");
        assert_eq!(code, Some(0), "{err}");
        err
    };
    let ten: Vec<String> = (1..=10).map(|s| s.to_string()).collect();
    let err = run("");
    assert!(
        err.contains("10 runs: stopped early: its first 10 conclusive runs violated"),
        "{err}"
    );
    assert_eq!(seeds(&cell), ten);
    let before = std::fs::read_to_string(cell.join("runs.csv")).unwrap();
    let recorded = std::fs::read_to_string(cell.join("command.json")).unwrap();
    assert_eq!(recorded.trim(), format!("[{BIN:?},\"lab-client\"]"));

    // The file now gives another command: read back, the cell keeps its.
    let (code, err) = matrix("", ", \"--other\"");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !err.contains(": seed "),
        "a cell read back runs nothing: {err}"
    );
    let report = std::fs::read_to_string(cell.join("report.md")).unwrap();
    assert!(
        report.contains(&format!("-- {BIN} lab-client`")),
        "{report}"
    );
    assert!(!report.contains("--other"), "{report}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains(&format!("every one of its runs used `{BIN} lab-client`")),
        "{report}"
    );
    // Going on with it would mix two commands: refused, nothing written.
    let (code, err) = matrix("violating_after = 12", ", \"--other\"");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("command.json: the cell's runs used"), "{err}");
    assert_eq!(
        std::fs::read_to_string(cell.join("runs.csv")).unwrap(),
        before
    );

    let err = run("violating_after = 12");
    assert!(
        err.contains("going on after the 10 runs it had finished"),
        "{err}"
    );
    assert!(
        err.contains(" runs: stopped early: its first 12 conclusive runs violated"),
        "{err}"
    );
    for s in 1..=10 {
        assert!(
            !err.contains(&format!("seed {s}: ")),
            "seed {s} ran again: {err}"
        );
    }
    let after = std::fs::read_to_string(cell.join("runs.csv")).unwrap();
    assert!(
        after.starts_with(&before),
        "the first ten rows are kept:\n{before}\n{after}"
    );
    // Twelve conclusive runs (an inconclusive one would add a seed).
    let ran = seeds(&cell).len();
    assert!((12..=14).contains(&ran), "{ran} runs");
    assert!(
        cells_and_runs(&std::fs::read_to_string(out.join("matrix.csv")).unwrap())
            .iter()
            .any(|c| c.ends_with(",12,violating"))
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("first 12 conclusive runs all violated"),
        "{report}"
    );

    let err = run("");
    let cut = format!("cut back to 10 of the {ran} runs it had finished");
    assert!(err.contains(&cut), "{err}");
    assert!(
        err.contains("10 runs: stopped early: its first 10 conclusive runs violated"),
        "{err}"
    );
    assert!(
        !err.contains(": seed "),
        "a cell cut back runs nothing: {err}"
    );
    assert_eq!(seeds(&cell), ten);
    for s in 11..=ran {
        assert!(!cell.join(format!("seed-{s}")).exists(), "seed {s} dropped");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! `run`'s default directory through the built binary: the `--set`
//! overrides are part of its name (`reports/<name>/seed-<N>--<key>=<value>/`),
//! so replays of one seed with different overrides never overwrite each
//! other; without `--set` it stays `reports/<name>/seed-<N>/`; `--out`
//! wins; the printed `report:` path is the directory written; the report
//! says which overrides it ran with.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// Three masters, two clients, 3 s: safe, and a few milliseconds to run.
const SMALL: &str = r#"name = "small"
duration = "3s"
[cluster]
nodes = 3
[clients]
count = 2
ttl = "1s"
hold = "200ms"
"#;

/// A fresh temporary directory holding `small.toml`, the current directory
/// of the runs (so that `reports/` lands in it).
fn temp_dir(tag: &str) -> crate::common::Scratch {
    let d = crate::common::Scratch::dir(&format!("sim-run-dirs-{tag}"));
    std::fs::write(d.join("small.toml"), SMALL).unwrap();
    d
}

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

/// Runs `run small.toml --seed 1 ARGS...` in `dir`, expecting exit 0, and
/// returns the directory of the printed `report:` path (relative to `dir`).
fn run_small(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["run", "small.toml", "--seed", "1"];
    all.extend_from_slice(args);
    let o = run(&all, dir);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{all:?}: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report = stdout
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no report: line in {stdout}"));
    report
        .strip_suffix("/index.html")
        .unwrap_or_else(|| panic!("{report} is not DIR/index.html"))
        .to_string()
}

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn two_set_values_of_one_seed_get_two_directories() {
    let dir = temp_dir("two");
    let a = run_small(&dir, &["--set", "clients.hold=300ms"]);
    let b = run_small(&dir, &["--set", "clients.hold=400ms"]);
    assert_eq!(a, "reports/small/seed-1--clients.hold=300ms");
    assert_eq!(b, "reports/small/seed-1--clients.hold=400ms");
    assert_eq!(
        entries(&dir.join("reports/small")),
        ["seed-1--clients.hold=300ms", "seed-1--clients.hold=400ms"]
    );
    for (d, value) in [(&a, "300ms"), (&b, "400ms")] {
        let md = std::fs::read_to_string(dir.join(d).join("report.md")).unwrap();
        let line = format!("Run with `--set clients.hold={value}` (seed 1).");
        assert!(md.contains(&line), "{d}/report.md lacks {line}:\n{md}");
        let html = std::fs::read_to_string(dir.join(d).join("index.html")).unwrap();
        assert!(html.contains(&format!("<code>--set clients.hold={value}</code>")));
        assert!(dir.join(d).join("history.csv").is_file());
    }

    // Two keys, one given twice: the last value wins, at its first place.
    let c = run_small(
        &dir,
        &[
            "--set",
            "clients.hold=300ms",
            "--set",
            "clients.ttl=2s",
            "--set",
            "clients.hold=500ms",
        ],
    );
    assert_eq!(
        c,
        "reports/small/seed-1--clients.hold=500ms--clients.ttl=2s"
    );
    let md = std::fs::read_to_string(dir.join(&c).join("report.md")).unwrap();
    assert!(md.contains(
        "Run with `--set clients.hold=300ms --set clients.ttl=2s --set clients.hold=500ms` (seed 1)."
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_set_the_directory_is_seed_n_and_the_report_says_nothing_of_overrides() {
    let dir = temp_dir("plain");
    let d = run_small(&dir, &[]);
    assert_eq!(d, "reports/small/seed-1");
    assert_eq!(entries(&dir.join("reports/small")), ["seed-1"]);
    let md = std::fs::read_to_string(dir.join(&d).join("report.md")).unwrap();
    assert!(!md.contains("Run with") && !md.contains("--set"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unsafe_characters_stay_in_one_directory_and_out_wins() {
    let dir = temp_dir("unsafe");
    let a = run_small(&dir, &["--set", "description=a b/c"]);
    let b = run_small(&dir, &["--set", "description=a b c"]);
    let name = a.strip_prefix("reports/small/").unwrap();
    assert!(!name.contains('/'), "{a}");
    let (readable, hash) = name.rsplit_once("--").unwrap();
    assert_eq!(readable, "seed-1--description=a_b_c");
    assert!(
        hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{a}"
    );
    assert_ne!(a, b, "values differing in a replaced character");
    assert_eq!(entries(&dir.join("reports/small")).len(), 2);
    assert!(dir.join(&a).join("report.md").is_file());

    // --out wins over the default directory.
    let out = dir.join("chosen");
    let d = run_small(
        &dir,
        &[
            "--set",
            "clients.hold=300ms",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(d, out.display().to_string());
    assert!(out.join("report.md").is_file());
    assert_eq!(entries(&dir.join("reports/small")).len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

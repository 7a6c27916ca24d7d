//! A sweep's directory: `--fresh` reruns everything and deletes only the
//! sweep's own files, another scenario's directory is refused, a resume with
//! other seeds or shard is refused, and a shard or a partial merge says how
//! many runs of how many it holds (a complete merge does not).

use crate::common;

use common::runs_without_wall;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// Two combinations of two seeds: four short runs.
const TINY: &str = r#"name = "tiny-sweep"
description = "first text"
duration = "2s"
expect = "violation"

[cluster]
nodes = 3

[clients]
count = 2
ttl = "1s"
hold = "100ms..800ms"
think = "0s..100ms"

[nemesis]
crash_every = "1s"

[sweep]
seeds = 2

[sweep.vary]
"cluster.restart" = ["immediate", "1.1ttl"]
"#;

fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::dir(&format!("sim-dirs-{tag}"))
}

/// Writes a scenario file into `dir` and returns its path.
fn scenario(dir: &Path, file: &str, text: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

fn redlock(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn sweep(file: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("sweep")
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(extra)
        .args(["--jobs", "1"])
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn refused(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file under `dir` with its bytes, sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            all.extend(snapshot(&p));
        } else {
            all.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    all.sort();
    all
}

#[test]
fn fresh_reruns_every_run_and_deletes_only_the_sweeps_files() {
    let tmp = temp_dir("fresh");
    let file = scenario(&tmp, "tiny.toml", TINY);
    let out = tmp.join("out");
    assert!(ok(&sweep(&file, &out, &[])).contains("runs: 4 (4 run now)"));
    assert!(ok(&sweep(&file, &out, &[])).contains("runs: 4 (0 run now)"));
    assert!(ok(&sweep(&file, &out, &["--fresh"])).contains("runs: 4 (4 run now)"));
    // What is not the sweep's survives --fresh; its own files go.
    for keep in ["frontier-x/report.md", "seed-3/index.html", "notes.txt"] {
        std::fs::create_dir_all(out.join(keep).parent().unwrap()).unwrap();
        std::fs::write(out.join(keep), "keep").unwrap();
    }
    std::fs::create_dir_all(out.join("runs")).unwrap();
    std::fs::write(out.join("runs/old.html"), "old").unwrap();
    std::fs::write(out.join("tradeoff.svg"), "old").unwrap();
    // The description edited: refused without --fresh, nothing touched.
    let edited = scenario(&tmp, "edited.toml", &TINY.replace("first text", "second"));
    let before = snapshot(&out);
    let e = refused(&sweep(&edited, &out, &[]));
    assert!(
        e.contains("different scenario text") && e.contains("--fresh"),
        "{e}"
    );
    assert_eq!(before, snapshot(&out));
    let stdout = ok(&sweep(&edited, &out, &["--fresh"]));
    assert!(stdout.contains("runs: 4 (4 run now)"), "{stdout}");
    for keep in ["frontier-x/report.md", "seed-3/index.html", "notes.txt"] {
        assert_eq!(std::fs::read_to_string(out.join(keep)).unwrap(), "keep");
    }
    // The old files went; the fresh sweep wrote its own.
    assert!(!out.join("runs/old.html").exists());
    let tradeoff = std::fs::read_to_string(out.join("tradeoff.svg")).unwrap();
    assert!(tradeoff.starts_with("<svg"), "{tradeoff}");
    let copy = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(copy.contains("second"), "{copy}");
    assert!(std::fs::read_to_string(out.join("report.md"))
        .unwrap()
        .contains("second"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn fresh_refuses_another_scenarios_directory_and_deletes_nothing() {
    let tmp = temp_dir("other");
    let file = scenario(&tmp, "tiny.toml", TINY);
    let out = tmp.join("out");
    ok(&sweep(&file, &out, &[]));
    let before = snapshot(&out);
    let other = scenario(
        &tmp,
        "other.toml",
        &TINY.replace("name = \"tiny-sweep\"", "name = \"other-sweep\""),
    );
    for extra in [&["--fresh"][..], &[]] {
        let e = refused(&sweep(&other, &out, extra));
        assert!(
            e.contains("\"tiny-sweep\"") && e.contains("\"other-sweep\""),
            "{e}"
        );
        assert_eq!(before, snapshot(&out));
    }
    // A runs.csv without a scenario copy is not known to be this scenario's.
    let bare = tmp.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(bare.join("runs.csv"), "scenario,seed\n").unwrap();
    let e = refused(&sweep(&file, &bare, &["--fresh"]));
    assert!(e.contains("no scenario.toml"), "{e}");
    assert_eq!(
        std::fs::read_to_string(bare.join("runs.csv")).unwrap(),
        "scenario,seed\n"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_resume_with_other_seeds_or_shard_is_refused_unless_fresh() {
    let tmp = temp_dir("meta");
    let file = scenario(&tmp, "tiny.toml", TINY);
    let out = tmp.join("out");
    ok(&sweep(&file, &out, &["--seeds", "1..=2"]));
    let meta = std::fs::read_to_string(out.join("sweep.json")).unwrap();
    for field in [
        "\"seeds_first\": 1",
        "\"seeds_last\": 2",
        "\"shard\": null",
        "\"runs_total\": 4",
        "\"runs_shard\": 4",
    ] {
        assert!(meta.contains(field), "{field} in {meta}");
    }
    let before = snapshot(&out);
    for extra in [&["--seeds", "1..=3"][..], &["--shard", "1/2"]] {
        let e = refused(&sweep(&file, &out, extra));
        assert!(e.contains("--fresh") && e.contains("seeds 1..=2"), "{e}");
        assert_eq!(before, snapshot(&out));
    }
    let stdout = ok(&sweep(&file, &out, &["--seeds", "1..=3", "--fresh"]));
    assert!(stdout.contains("runs: 6 (6 run now)"), "{stdout}");
    let meta = std::fs::read_to_string(out.join("sweep.json")).unwrap();
    assert!(meta.contains("\"runs_total\": 6"), "{meta}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_merge_of_one_shard_of_two_says_how_many_runs_it_holds() {
    let tmp = temp_dir("partial");
    let file = scenario(&tmp, "tiny.toml", TINY);
    let all = tmp.join("all");
    ok(&sweep(&file, &all, &[]));
    for k in 1..=2 {
        let stdout = ok(&sweep(
            &file,
            &tmp.join(format!("s{k}")),
            &["--shard", &format!("{k}/2")],
        ));
        assert!(
            stdout.contains(&format!("runs: 2 of 4 (shard {k}/2)")),
            "{stdout}"
        );
    }
    let shard_report = std::fs::read_to_string(tmp.join("s1/report.md")).unwrap();
    assert!(
        shard_report.contains("**Partial:** this sweep is shard 1/2"),
        "{shard_report}"
    );
    let merge = |dirs: &[&str], out: &str| {
        let mut args: Vec<PathBuf> = vec!["merge".into()];
        args.extend(dirs.iter().map(|d| tmp.join(d)));
        args.extend(["--out".into(), tmp.join(out)]);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        ok(&redlock(&args))
    };
    let stdout = merge(&["s1"], "m1");
    assert!(
        stdout.contains("runs: 2 (0 run now)")
            && stdout.contains("runs: 2 of 4 (shards 1 of 2 present; missing: 2)"),
        "{stdout}"
    );
    let notice = "this merge holds 2 of the sweep's 4 runs (shards 1 of 2 present; missing: 2). \
                  Rates below are of the runs held";
    for f in ["report.md", "index.html"] {
        let text = std::fs::read_to_string(tmp.join("m1").join(f))
            .unwrap()
            .replace("&#39;", "'");
        assert!(text.contains(notice), "{f}: {text}");
    }
    // The whole sweep: no partial line, no notice, the unsharded files.
    let stdout = merge(&["s2", "s1"], "m2");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("runs:")).count(),
        1,
        "{stdout}"
    );
    for dir in ["m2", "all"] {
        let report = std::fs::read_to_string(tmp.join(dir).join("report.md")).unwrap();
        assert!(!report.contains("Partial"), "{dir}: {report}");
    }
    assert_eq!(runs_without_wall(&all), runs_without_wall(&tmp.join("m2")));
    assert_eq!(
        std::fs::read(all.join("summary.csv")).unwrap(),
        std::fs::read(tmp.join("m2/summary.csv")).unwrap()
    );
    // A merge of merges: the merge left a sweep.json of the whole sweep,
    // so the merge of the complete merge is complete and of its seeds.
    let meta = std::fs::read_to_string(tmp.join("m2/sweep.json")).unwrap();
    assert!(
        meta.contains("\"runs_total\": 4") && meta.contains("\"shard\": null"),
        "{meta}"
    );
    let stdout = merge(&["m2"], "m22");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("runs:")).count(),
        1,
        "{stdout}"
    );
    let report = std::fs::read_to_string(tmp.join("m22/report.md")).unwrap();
    assert!(
        !report.contains("Partial") && report.contains("seeds 1..=2"),
        "{report}"
    );
    // And of the partial merge: partial still, of the whole sweep's 4.
    let stdout = merge(&["m1"], "m11");
    assert!(stdout.contains("runs: 2 of 4"), "{stdout}");
    // A violating row that does not replay to its trace (shards of another
    // version, or edited): bad input, exit 2, nothing written.
    // (Seed 7 violates at an immediate restart.)
    let edited = tmp.join("edited");
    ok(&sweep(&file, &edited, &["--seeds", "7..=7"]));
    let runs = std::fs::read_to_string(edited.join("runs.csv")).unwrap();
    let line = runs
        .lines()
        .find(|l| l.contains(",violation,"))
        .expect("a violating run in the tiny sweep");
    let trace = line.split(',').nth(13).unwrap();
    let changed = runs.replace(line, &line.replace(trace, "0123456789abcdef"));
    std::fs::write(edited.join("runs.csv"), changed).unwrap();
    let o = Command::new(BIN)
        .arg("merge")
        .arg(&edited)
        .arg("--out")
        .arg(tmp.join("m5"))
        .output()
        .unwrap();
    let e = refused(&o);
    assert!(
        e.contains("0123456789abcdef") && e.contains("another version"),
        "{e}"
    );
    assert!(!tmp.join("m5").exists());
    // A shard of an older version, without sweep.json: the whole sweep's
    // seeds are the scenario copy's.
    std::fs::remove_file(tmp.join("s1/sweep.json")).unwrap();
    let stdout = merge(&["s1"], "m3");
    assert!(
        stdout.contains(&format!(
            "runs: 2 of 4 ({}: no sweep.json)",
            tmp.join("s1").display()
        )),
        "{stdout}"
    );
    // A sweep.json that is not one: bad input, exit 2, nothing written.
    std::fs::write(
        tmp.join("s1/sweep.json"),
        r#"{"scenario":"tiny-sweep","seeds_first":9,"seeds_last":1,"combinations":2,"shard":null,"runs_total":4,"runs_shard":4}"#,
    )
    .unwrap();
    let o = Command::new(BIN)
        .arg("merge")
        .arg(tmp.join("s1"))
        .arg("--out")
        .arg(tmp.join("m4"))
        .output()
        .unwrap();
    assert!(refused(&o).contains("sweep.json"));
    assert!(!tmp.join("m4").exists());
    assert!(refused(&sweep(&file, &tmp.join("s1"), &["--shard", "1/2"])).contains("sweep.json"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn fresh_without_an_earlier_sweep_deletes_nothing_and_an_unnamed_scenario_is_itself() {
    let tmp = temp_dir("nosweep");
    let file = scenario(&tmp, "tiny.toml", TINY);
    let out = tmp.join("out");
    std::fs::create_dir_all(out.join("runs")).unwrap();
    std::fs::write(out.join("runs/notes.txt"), "mine").unwrap();
    std::fs::write(out.join("violation_rate_notes.svg"), "mine").unwrap();
    ok(&sweep(&file, &out, &["--fresh"]));
    assert_eq!(
        std::fs::read_to_string(out.join("runs/notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("violation_rate_notes.svg")).unwrap(),
        "mine"
    );
    // A scenario without `name` (named by its file's stem): --fresh knows
    // its own earlier sweep.
    let unnamed = scenario(
        &tmp,
        "noname.toml",
        &TINY.replace("name = \"tiny-sweep\"\n", ""),
    );
    let out2 = tmp.join("out2");
    ok(&sweep(&unnamed, &out2, &[]));
    let edited = scenario(
        &tmp,
        "noname.toml",
        &TINY
            .replace("name = \"tiny-sweep\"\n", "")
            .replace("first text", "second"),
    );
    assert!(ok(&sweep(&edited, &out2, &["--fresh"])).contains("runs: 4 (4 run now)"));
    std::fs::remove_dir_all(&tmp).unwrap();
}

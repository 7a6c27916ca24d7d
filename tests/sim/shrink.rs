//! `redlock-sim shrink` through the built binary: a violating nemesis run
//! shrinks to a few explicit faults whose scenario still violates, the same
//! way every time and on any number of threads (an aimed nemesis's too);
//! a safe run exits 1 and bad input exits 2, both writing nothing. And, as
//! a library call, the explicit faults of an aimed run replay that run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::dir(&format!("sim-shrink-{tag}"))
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The value after `key: ` on stdout.
fn line<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no `{key}:` line in:\n{stdout}"))
}

/// Five masters without persistence, immediate restarts, a nemesis
/// crashing a node every second and splitting the network every 3 s: seed 1
/// of its first 10 s violates (several overlaps, stale writes).
const GUIDANCE: &str = "delayed_restart_guidance.toml";

#[test]
fn a_nemesis_run_shrinks_to_a_few_faults_that_still_violate() {
    let dir = temp_dir("nemesis");
    let file = scenario(GUIDANCE);
    let file = file.to_str().unwrap();
    let out = dir.join("a");
    let args = |out: &str, jobs: &str| {
        vec![
            "shrink".to_string(),
            file.to_string(),
            "--seed".into(),
            "1".into(),
            "--set".into(),
            "duration=10s".into(),
            "--jobs".into(),
            jobs.into(),
            "--out".into(),
            out.into(),
        ]
    };
    let a: Vec<String> = args(out.to_str().unwrap(), "2");
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>(), &dir);
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    let (before, after) = line(&stdout, "faults")
        .split_once(" -> ")
        .map(|(b, a)| (b.parse::<usize>().unwrap(), a.parse::<usize>().unwrap()))
        .expect("faults: B -> A");
    assert!(after <= 3 && after < before, "{stdout}");
    let minimal = out.join("minimal.toml");
    assert_eq!(line(&stdout, "minimal"), minimal.display().to_string());
    for f in [
        "history.csv",
        "summary.json",
        "report.md",
        "index.html",
        "timeline.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }

    let written = std::fs::read_to_string(&minimal).unwrap();
    let doc: toml::Table = written.parse().unwrap();
    assert!(
        doc.get("nemesis").is_none() && doc.get("sweep").is_none(),
        "{written}"
    );
    assert_eq!(doc["expect"].as_str(), Some("violation"));
    assert_eq!(doc["seed"].as_integer(), Some(1));
    assert_eq!(
        doc["duration"].as_str(),
        Some("10s"),
        "the --set value is kept"
    );
    assert_eq!(
        doc["name"].as_str(),
        Some("delayed-restart-guidance-shrunk-seed-1")
    );
    let description = doc["description"].as_str().unwrap();
    assert!(
        description.contains(file) && description.contains("--set duration=10s"),
        "{description}"
    );
    let faults = doc
        .get("faults")
        .and_then(|f| f.as_array())
        .map_or(0, Vec::len);
    assert_eq!(faults, after, "{written}");

    // The minimal scenario violates on its own, as `run` sees it.
    let o = run(
        &[
            "run",
            minimal.to_str().unwrap(),
            "--out",
            dir.join("replay").to_str().unwrap(),
        ],
        &dir,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    assert_eq!(line(&stdout, "verdict"), "violation");

    // Again, on one thread and into the default directory, named with the
    // --set value: the same bytes.
    let again = args("", "1");
    let again: Vec<&str> = again[..again.len() - 2]
        .iter()
        .map(String::as_str)
        .collect();
    let o = run(&again, &dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let default = "reports/delayed-restart-guidance/shrink-seed-1--duration=10s/minimal.toml";
    assert_eq!(line(&text(&o.stdout), "minimal"), default);
    assert_eq!(std::fs::read_to_string(dir.join(default)).unwrap(), written);
    assert!(!dir
        .join("reports/delayed-restart-guidance/shrink-seed-1")
        .exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_safe_run_exits_1_and_writes_nothing() {
    let dir = temp_dir("safe");
    let out = dir.join("out");
    let file = scenario("crash_restart_delayed.toml");
    let o = run(
        &[
            "shrink",
            file.to_str().unwrap(),
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("no violation"), "{stdout}");
    assert!(!out.exists());
    assert!(!dir.join("reports").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_2_naming_what_is_wrong_and_writes_nothing() {
    let dir = temp_dir("bad");
    let out = dir.join("out");
    let broken = dir.join("broken.toml");
    std::fs::write(&broken, "duration = \"10s\"\n[cluster\nnodes = 3\n").unwrap();
    let guidance = scenario(GUIDANCE);
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec![broken.to_str().unwrap()], vec!["broken.toml:2"]),
        (
            vec![guidance.to_str().unwrap(), "--set", "cluster.restrat=1s"],
            vec![GUIDANCE, "cluster.restrat"],
        ),
        (
            vec![guidance.to_str().unwrap(), "--set", "cluster.restart=soon"],
            vec![GUIDANCE, "cluster.restart", "soon"],
        ),
        (vec!["no/such/file.toml"], vec!["no/such/file.toml"]),
        (
            vec![guidance.to_str().unwrap(), "--seed", "18446744073709551615"],
            vec![GUIDANCE, "seed"],
        ),
    ];
    for (args, names) in cases {
        let mut all = vec!["shrink"];
        all.extend(&args);
        all.extend(["--jobs", "2", "--out", out.to_str().unwrap()]);
        let o = run(&all, &dir);
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        for n in names {
            assert!(stderr.contains(n), "{args:?}: {n} not in {stderr}");
        }
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
        assert!(!dir.join("reports").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kleppmann's pause in small: c1 stops right after acquiring, before its
/// first write. A pause due at a fixed time cannot stop it between those
/// two instructions, so the file's triggered entry is kept as written.
const SMALL_PAUSE: &str = r#"name = "small-pause"
duration = "4s"
[cluster]
nodes = 3
[clients]
count = 2
ttl = "1s"
hold = "500ms"
[hosts.c1]
hold = "100ms"
[hosts.c2]
start = "100ms"
[[faults]]
at = "0s"
after = "c1:acquired"
do = "pause"
host = "c1"
for = "1200ms"
"#;

#[test]
fn a_pause_triggered_by_the_lock_keeps_its_trigger() {
    let dir = temp_dir("trigger");
    let file = dir.join("small_pause.toml");
    std::fs::write(&file, SMALL_PAUSE).unwrap();
    let out = dir.join("out");
    let o = run(
        &[
            "shrink",
            file.to_str().unwrap(),
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    assert_eq!(line(&stdout, "faults"), "1 -> 1");
    let written = std::fs::read_to_string(out.join("minimal.toml")).unwrap();
    let doc: toml::Table = written.parse().unwrap();
    let fault = &doc["faults"].as_array().unwrap()[0];
    assert_eq!(fault["after"].as_str(), Some("c1:acquired"), "{written}");
    assert_eq!(fault["do"].as_str(), Some("pause"), "{written}");
    let o = run(
        &[
            "run",
            out.join("minimal.toml").to_str().unwrap(),
            "--out",
            dir.join("replay").to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(line(&text(&o.stdout), "verdict"), "violation");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A clock jump the file releases 3 s after c1's acquisition, in a run of
/// 2 s: it acts after the duration, while c1 and c2 still hold and wait.
/// Due from the start (at 3 s) it cannot be written in a scenario file.
const JUMP_AFTER_DURATION: &str = r#"name = "jump-after-duration"
duration = "2s"

[cluster]
topology = "single"
nodes = 1

[clients]
count = 2
ttl = "10s"
retry_count = 100
retry_delay = "200ms"

[hosts.c1]
hold = "5s"

[hosts.c2]
start = "1.5s"
hold = "5s"

[[faults]]
after = "c1:acquired"
at = "3s"
do = "clock-jump"
host = "n1"
by = "+20s"
"#;

#[test]
fn a_fault_released_after_the_duration_keeps_its_trigger() {
    let dir = temp_dir("after-duration");
    let file = dir.join("jump.toml");
    std::fs::write(&file, JUMP_AFTER_DURATION).unwrap();
    let out = dir.join("out");
    let o = run(
        &[
            "shrink",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    let written = std::fs::read_to_string(out.join("minimal.toml")).unwrap();
    let doc: toml::Table = written.parse().unwrap();
    let fault = &doc["faults"].as_array().unwrap()[0];
    assert_eq!(fault["after"].as_str(), Some("c1:acquired"), "{written}");
    assert_eq!(fault["do"].as_str(), Some("clock-jump"), "{written}");
    let o = run(
        &[
            "run",
            out.join("minimal.toml").to_str().unwrap(),
            "--out",
            dir.join("replay").to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(line(&text(&o.stdout), "verdict"), "violation");
}

/// The aimed campaign, cut to 10 s: seed 24 of `no-validity-check` is
/// caught by crashes, partitions, pauses and clock jumps aimed at lock
/// events, most of them at an event's own instant.
const CAMPAIGN: &str = "variants/campaign.toml";

fn campaign_sets() -> Vec<(String, toml::Value)> {
    ["clients.variant=no-validity-check", "duration=10s"]
        .iter()
        .map(|s| redlock_harness::runner::parse_set(s).unwrap())
        .collect()
}

/// The events of a run but the skipped faults (explicit faults are the
/// applied ones only), as `history.csv` rows.
fn rows(run: &redlock_harness::runner::Run) -> Vec<[String; 4]> {
    run.history
        .events
        .iter()
        .filter(|e| e.kind.name() != "fault_skipped")
        .map(|e| e.row())
        .collect()
}

/// A fault the aimed nemesis placed at an event's instant is released in
/// the middle of that instant's step (a pause or clock jump after the
/// hosts ran it); due at that time from the start it would act before the
/// step, and the replay went another way. Made explicit, it follows its
/// event (`after = "c2:lock_call@1864ms"`): the replay is the run, event
/// for event.
#[test]
fn the_explicit_faults_of_an_aimed_run_replay_it_event_for_event() {
    use redlock_harness::runner;
    use redlock_harness::scenario::{Scenario, Trigger};
    let base = runner::load_file(&scenario(CAMPAIGN), &campaign_sets()).unwrap();
    let run = runner::simulate_keeping(base.clone(), 24).unwrap();
    let faults = redlock_harness::search::explicit::absolute(&run.faults);
    let kinds = |f: &&redlock_harness::scenario::Fault| matches!(f.after, Trigger::Event { .. });
    let instant: Vec<&str> = faults
        .iter()
        .filter(kinds)
        .map(|f| f.action.kind())
        .collect();
    assert!(
        instant.contains(&"partition") && instant.contains(&"pause"),
        "{instant:?}"
    );
    let replay = Scenario {
        faults,
        nemesis: None,
        ..base
    };
    let again = runner::simulate_keeping(replay, 24).unwrap();
    assert_eq!(run.check.verdict, again.check.verdict);
    assert_eq!(rows(&run), rows(&again));
}

/// The same run shrinks: exit 0 and a minimal scenario that violates (it
/// exited 70 when its explicit faults were all due from the start).
#[test]
fn an_aimed_run_with_partitions_and_pauses_shrinks() {
    let dir = temp_dir("aimed");
    let file = scenario(CAMPAIGN);
    let out = dir.join("out");
    let o = run(
        &[
            "shrink",
            file.to_str().unwrap(),
            "--seed",
            "24",
            "--set",
            "clients.variant=no-validity-check",
            "--set",
            "duration=10s",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &dir,
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    let (before, after) = line(&stdout, "faults").split_once(" -> ").unwrap();
    assert!(
        after.parse::<usize>().unwrap() < before.parse().unwrap(),
        "{stdout}"
    );
    let minimal = out.join("minimal.toml");
    let o = run(
        &[
            "run",
            minimal.to_str().unwrap(),
            "--out",
            dir.join("replay").to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(line(&text(&o.stdout), "verdict"), "violation");
    let _ = std::fs::remove_dir_all(&dir);
}

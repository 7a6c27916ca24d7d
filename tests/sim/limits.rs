//! The limits of `scenario-format.md` ("Limits"): what cannot run or would
//! silently mean something else is refused with exit 2 naming the key and
//! nothing written; the largest documented counts run to the end; mutated
//! files that are accepted run without a panic; and a failure of the program
//! itself exits 70.

use crate::common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_harness::runner::{self, RunError};
use redlock_harness::scenario::{self, MAX_CLIENTS, MAX_NODES};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// A fresh temporary directory for one test.
fn temp_dir(tag: &str) -> crate::common::Scratch {
    crate::common::Scratch::dir(&format!("sim-limits-{tag}"))
}

/// Runs the binary with `args`, killing it after `limit` (a hang fails).
fn run_bin(args: &[&std::ffi::OsStr], limit: Duration, what: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `redlock-sim run FILE --out OUT [extra...]`.
fn run(file: &Path, out: &Path, extra: &[&str], limit: Duration) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["run".as_ref(), file.as_os_str()];
    args.push("--out".as_ref());
    args.push(out.as_os_str());
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    run_bin(&args, limit, &file.display().to_string())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn no_panic(o: &Output, what: &str) {
    let err = stderr(o);
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{what}: a panic:\n{err}"
    );
}

/// Every refused file: (text, the key the error must name).
fn refused() -> Vec<(String, &'static str)> {
    let d = "duration = \"5s\"\n";
    let mut v: Vec<(String, &'static str)> = vec![
        (format!("{d}tick = \"5ms\"\n[network]\nlatency = \"1ms..2ms\"\n"), "tick"),
        (format!("{d}tick = \"1ns\"\n"), "tick"),
        (format!("{d}tick = \"99us\"\n"), "tick"),
        (format!("{d}[network]\nlatency = \"0ms..5ms\"\n"), "network.latency"),
        (format!("{d}tick = \"2ms\"\n[network]\nlatency = \"3ms\"\n[[faults]]\nat = \"1s\"\ndo = \"latency\"\nbetween = [\"c1\", \"n1\"]\nlatency = \"1ms..9ms\"\n"), "tick"),
        (format!("{d}[[faults]]\nat = \"1s\"\ndo = \"latency\"\nbetween = [\"c1\", \"n1\"]\nlatency = \"500us\"\n"), "faults[0].latency"),
        (format!("{d}[[faults]]\nat = \"1000s\"\ndo = \"heal\"\n"), "faults[0].at"),
        (format!("{d}[[faults]]\nat = \"1s\"\ndo = \"heal\"\n[[faults]]\nat = \"5001ms\"\ndo = \"crash\"\nhost = \"n1\"\n"), "faults[1].at"),
        (format!("{d}[hosts.n1]\nclock_rate = 1e-300\n"), "hosts.n1.clock_rate"),
        (format!("{d}[hosts.c1]\nclock_rate = 100.5\n"), "hosts.c1.clock_rate"),
        (format!("{d}[hosts.store]\nclock_rate = 0.009\n"), "hosts.store.clock_rate"),
        (format!("{d}[[faults]]\nat = \"1s\"\ndo = \"clock-rate\"\nhost = \"n2\"\nrate = 1000\n"), "faults[0].rate"),
        (format!("{d}[[faults]]\nat = \"1s\"\ndo = \"clock-rate\"\nhost = \"n2\"\nrate = 0.001\n"), "faults[0].rate"),
        (format!("{d}[clocks]\ndrift = 0.995\n"), "clocks.drift"),
        (format!("{d}[clients]\ncount = {}\n", MAX_CLIENTS + 1), "clients.count"),
        (format!("{d}[clients]\ncount = 200\n"), "clients.count"),
        (format!("{d}[cluster]\nnodes = {}\n", MAX_NODES + 1), "cluster.nodes"),
        (format!("{d}[cluster]\ntopology = \"single\"\nnodes = 1024\n"), "cluster.nodes"),
    ];
    v.push((
        format!("{d}tick = \"100us\"\n[network]\nlatency = \"50us..1ms\"\n"),
        "tick",
    ));
    v
}

#[test]
fn refusals_exit_2_name_the_key_and_write_nothing() {
    let dir = temp_dir("refused");
    for (i, (text, key)) in refused().iter().enumerate() {
        let file = dir.join(format!("refused-{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = dir.join(format!("out-{i}"));
        let o = run(&file, &out, &[], Duration::from_secs(60));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}\n{err}");
        assert!(
            err.contains(&format!(": {key}: ")),
            "{key} not named:\n{err}"
        );
        assert!(
            err.contains(&file.display().to_string()),
            "file not named:\n{err}"
        );
        assert!(!out.exists(), "{text}: {} was written", out.display());
        // The library says the same, with the line.
        let e = scenario::parse_str(text, "t.toml").unwrap_err();
        assert_eq!(e.key, *key, "{text}");
        if !text.contains("latency = \"0ms..5ms\"") || e.key != "network.latency" {
            assert!(e.line.is_some(), "{text}: no line in {e}");
        }
    }
}

#[test]
fn allowed_at_the_limits() {
    let d = "duration = \"5s\"\n";
    for text in [
        format!("{d}tick = \"100us\"\n[network]\nlatency = \"100us..1ms\"\n"),
        format!("{d}tick = \"1ms\"\n[network]\nlatency = \"1ms\"\n"),
        format!("{d}[[faults]]\nat = \"5s\"\ndo = \"heal\"\n"),
        // Triggered faults count from their trigger: not checked against duration.
        format!("{d}[[faults]]\nat = \"1000s\"\nafter = \"c1:acquired\"\ndo = \"heal\"\n"),
        format!("{d}[hosts.n1]\nclock_rate = 0.01\n[hosts.n2]\nclock_rate = 100\n"),
        format!("{d}[clocks]\ndrift = 0.99\n"),
        format!("{d}[clients]\ncount = {MAX_CLIENTS}\n[cluster]\nnodes = {MAX_NODES}\n"),
    ] {
        if let Err(e) = scenario::parse_str(&text, "t.toml") {
            panic!("{text}\nrefused: {e}");
        }
    }
}

#[test]
fn sweep_cells_and_set_overrides_are_checked_too() {
    let dir = temp_dir("cells");
    let base = "duration = \"2s\"\n[network]\nlatency = \"1ms..2ms\"\n";
    for (vary, key) in [
        ("\"clients.count\" = [2, 101]", "clients.count"),
        ("\"cluster.nodes\" = [3, 16]", "cluster.nodes"),
        ("tick = [\"1ms\", \"5ms\"]", "tick"),
        (
            "\"hosts.n1.clock_rate\" = [1.0, 1e-300]",
            "hosts.n1.clock_rate",
        ),
        ("\"clocks.drift\" = [0.0, 0.999]", "clocks.drift"),
        ("\"faults[0].at\" = [\"1s\", \"3s\"]", "faults[0].at"),
    ] {
        let text = format!(
            "{base}[[faults]]\nat = \"1s\"\ndo = \"heal\"\n[sweep]\nseeds = 2\n[sweep.vary]\n{vary}\n"
        );
        let file = dir.join("cell.toml");
        std::fs::write(&file, &text).unwrap();
        let e = scenario::check_sweep(&text, "cell.toml").unwrap_err();
        assert_eq!(e.key, key, "{text}\n{e}");
        let o = Command::new(BIN).arg("check").arg(&file).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(stderr(&o).contains(key), "{}", stderr(&o));
        let out = dir.join("sweep-out");
        let o = Command::new(BIN)
            .arg("sweep")
            .arg(&file)
            .arg("--out")
            .arg(&out)
            .arg("--jobs")
            .arg("1")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{text}\n{}", stderr(&o));
        assert!(stderr(&o).contains(key), "{}", stderr(&o));
        assert!(!out.exists());
    }
    // `run --set` applies the same checks.
    let file = dir.join("base.toml");
    std::fs::write(&file, base).unwrap();
    for (set, key) in [
        ("tick=5ms", "tick"),
        ("clients.count=101", "clients.count"),
        (
            &*format!("cluster.nodes={}", MAX_NODES + 1),
            "cluster.nodes",
        ),
        ("hosts.n1.clock_rate=1e-300", "hosts.n1.clock_rate"),
        ("tick=1ns", "tick"),
    ] {
        let out = dir.join("set-out");
        let o = run(&file, &out, &["--set", set], Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(2), "--set {set}\n{}", stderr(&o));
        assert!(stderr(&o).contains(key), "{}", stderr(&o));
        assert!(!out.exists());
    }
}

/// Runs a file at the largest counts through the binary and reports the time.
fn runs_to_the_end(tag: &str, text: &str) {
    let dir = temp_dir(tag);
    let file = dir.join(format!("{tag}.toml"));
    std::fs::write(&file, text).unwrap();
    let start = Instant::now();
    let o = run(&file, &dir.join("out"), &[], Duration::from_secs(600));
    eprintln!("{tag}: {:.1} s", start.elapsed().as_secs_f64());
    no_panic(&o, tag);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{tag}: exit {:?}\n{}",
        o.status.code(),
        stderr(&o)
    );
    assert!(dir.join("out").join("history.csv").exists());
}

#[test]
fn largest_counts_run_redlock() {
    runs_to_the_end(
        "max-redlock",
        &format!(
            "duration = \"2s\"\n[cluster]\ntopology = \"redlock\"\nnodes = {MAX_NODES}\n[clients]\ncount = {MAX_CLIENTS}\nttl = \"2s\"\nhold = \"100ms..300ms\"\n"
        ),
    );
}

#[test]
fn largest_counts_run_single() {
    // Every client asks the sentinel and connects to the master at once;
    // the master's pause holds every connect, released together.
    runs_to_the_end(
        "max-single",
        &format!(
            "duration = \"2s\"\n[cluster]\ntopology = \"single\"\nnodes = {MAX_NODES}\nfailover_after = \"500ms\"\n[clients]\ncount = {MAX_CLIENTS}\nttl = \"2s\"\nhold = \"100ms..300ms\"\n[[faults]]\nat = \"300ms\"\ndo = \"pause\"\nhost = \"n1\"\nfor = \"3s\"\n"
        ),
    );
}

/// Bases for the mutation pass: short, every section, every fault kind.
const REDLOCK: &str = r#"name = "mut-redlock"
seed = 3
duration = "2s"
tick = "1ms"
expect = "safe"

[cluster]
topology = "redlock"
nodes = 3
persistence = "everysec"
restart = "0.5ttl"

[network]
latency = "1ms..5ms"

[clients]
count = 3
ttl = "1s"
hold = "100ms..300ms"
writes = 3
think = "0s..100ms"
retry_count = 3
retry_delay = "50ms"
request_timeout = "50ms"
drift_factor = 0.01
renew = true
fencing = false
variant = "spec"

[clocks]
drift = 0.01
offset = "-50ms..50ms"

[hosts.c2]
start = "200ms"
variant = "no-validity-check"

[hosts.n2]
clock_rate = 1.05

[[faults]]
at = "100ms"
do = "crash"
host = "n1"
restart = "never"

[[faults]]
at = "500ms"
do = "restart"
host = "n1"

[[faults]]
at = "0s"
do = "partition"
sides = [["c1", "c2"], ["n1"]]
oneway = true
for = "0.5ttl"

[[faults]]
at = "0s"
after = "c1:acquired"
do = "pause"
host = "c1"
for = "1500ms"

[[faults]]
at = "700ms"
do = "clock-jump"
host = "n3"
by = "+2s"

[[faults]]
at = "800ms"
do = "clock-rate"
host = "n2"
rate = 0.9

[[faults]]
at = "900ms"
do = "latency"
between = ["c3", "n2"]
latency = "100ms..200ms"
for = "1s"

[nemesis]
crash_every = "1s"
partition_every = "700ms"
partition_for = "100ms..500ms"
pause_every = "900ms"
pause_for = "50ms..400ms"
clock_jump_every = "1s"
clock_jump = "-1s..1s"
clock_jump_target = "any"
"#;

const SINGLE: &str = r#"name = "mut-single"
duration = "2s"
expect = "violation"

[cluster]
topology = "single"
nodes = 3
replication_delay = "5ms"
failover_after = "300ms"
persistence = "always"
restart = "immediate"

[clients]
count = 4
ttl = "800ms"
hold = "300ms..600ms"
writes = 2
fencing = true

[hosts.c3]
hold = "200ms"

[hosts.sentinel]
clock_offset = "10ms"

[[faults]]
at = "200ms"
do = "crash"
host = "master"

[[faults]]
at = "400ms"
do = "isolate"
host = "sentinel"
for = "500ms"

[[faults]]
at = "1s"
do = "heal"

[[faults]]
at = "100ms"
after = "c2:released"
do = "pause"
host = "master"
for = "300ms"

[[faults]]
at = "0s"
after = "c1:lost"
do = "isolate"
host = "store"
for = "200ms"

[nemesis]
crash_every = "800ms"
crash_target = "master"
"#;

/// Mutated files whose cases are kept because they once failed.
const REGRESSIONS: &[&str] = &[];

#[test]
fn mutated_files_run_without_panic() {
    let dir = temp_dir("mutated");
    let mut rng = ChaCha8Rng::seed_from_u64(0x11_31_75);
    let mut cases: Vec<(String, u64)> = REGRESSIONS.iter().map(|t| (t.to_string(), 1)).collect();
    // Most mutations are refused; keep 150 that the parser accepts (as
    // `run --set duration=2s` will), and some refused ones.
    // `LIMITS_FUZZ_CASES=N` runs N accepted cases instead (a longer search).
    let accepted_target: usize = std::env::var("LIMITS_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    const REFUSED: usize = 50;
    let short = [("duration".to_string(), toml::Value::String("2s".into()))];
    // The two bases above, and every shipped scenario.
    let mut bases: Vec<String> = vec![REDLOCK.to_string(), SINGLE.to_string()];
    for d in ["scenarios", "scenarios/variants"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        bases.extend(files.iter().map(|f| std::fs::read_to_string(f).unwrap()));
    }
    let (mut accepted, mut refused) = (0, 0);
    for round in 0.. {
        if accepted >= accepted_target {
            break;
        }
        // Half of the cases from the two bases, which exercise every key.
        let base = match round % 4 {
            0 => REDLOCK,
            1 => SINGLE,
            _ => &bases[rng.random_range(0..bases.len())],
        };
        let text = common::mutate(base, &mut rng);
        let seed = rng.random_range(1..=1000);
        if scenario::parse_with_overrides(&text, "m.toml", &short).is_ok() {
            accepted += 1;
        } else if refused < REFUSED {
            refused += 1;
        } else {
            continue;
        }
        cases.push((text, seed));
    }
    assert_eq!(accepted, accepted_target);
    let cases = std::sync::Arc::new(cases);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (cases, next, dir) = (cases.clone(), next.clone(), dir.to_path_buf());
            std::thread::spawn(move || {
                let mut codes = [0usize; 3];
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some((text, seed)) = cases.get(i) else {
                        return codes;
                    };
                    let file = dir.join(format!("case-{i}.toml"));
                    std::fs::write(&file, text).unwrap();
                    let out = dir.join(format!("out-{w}"));
                    let _ = std::fs::remove_dir_all(&out);
                    let seed = seed.to_string();
                    let o = run(
                        &file,
                        &out,
                        &["--seed", &seed, "--set", "duration=2s"],
                        Duration::from_secs(120),
                    );
                    let what = format!("case {i} (seed {seed}):\n{text}\n");
                    no_panic(&o, &what);
                    match o.status.code() {
                        Some(c @ 0..=2) => codes[c as usize] += 1,
                        c => panic!("{what}exit {c:?}\n{}", stderr(&o)),
                    }
                    if o.status.code() == Some(2) {
                        assert!(!out.exists(), "{what}refused but wrote {}", out.display());
                    }
                }
            })
        })
        .collect();
    let mut codes = [0usize; 3];
    for w in workers {
        let c = w.join().unwrap();
        for k in 0..3 {
            codes[k] += c[k];
        }
    }
    eprintln!("exit codes 0/1/2: {codes:?}");
    // Enough of them must be accepted and actually run.
    assert!(
        codes[0] + codes[1] >= accepted_target,
        "too few ran: {codes:?}"
    );
}

#[test]
fn unwritable_output_exits_70() {
    let dir = temp_dir("exit70");
    let file = dir.join("ok.toml");
    std::fs::write(&file, "duration = \"1s\"\n").unwrap();
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let out = blocker.join("out");
    let o = run(&file, &out, &[], Duration::from_secs(60));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(70), "{err}");
    assert!(err.contains("cannot write the outputs"), "{err}");
    assert!(err.contains(&out.display().to_string()), "{err}");
    no_panic(&o, "run");

    let o = Command::new(BIN)
        .arg("sweep")
        .arg(&file)
        .args(["--seeds", "1", "--out"])
        .arg(blocker.join("sweep"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot create the output directory"));

    let shard = dir.join("shard");
    let o = Command::new(BIN)
        .arg("sweep")
        .arg(&file)
        .args(["--seeds", "1", "--out"])
        .arg(&shard)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = Command::new(BIN)
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(blocker.join("merged"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write the outputs"));
    // A missing shard is bad input, not a failure of the program.
    let o = Command::new(BIN)
        .arg("merge")
        .arg(dir.join("no-such-shard"))
        .arg("--out")
        .arg(dir.join("merged"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_panic_inside_a_run_is_a_failure_not_an_abort() {
    // A scenario the parser would refuse (no node at all), built by hand:
    // the simulation panics, and `simulate` returns the failure instead.
    let mut s = scenario::parse_str(
        "duration = \"1s\"\n[cluster]\ntopology = \"single\"\nnodes = 1\n",
        "t.toml",
    )
    .unwrap();
    s.cluster.nodes = 0;
    match runner::simulate(s, 1) {
        Err(RunError::Failed(m)) => assert!(m.contains("panicked"), "{m}"),
        Err(e) => panic!("not a failure of the program: {e}"),
        Ok(_) => panic!("a run without nodes succeeded"),
    }
}

//! Event skipping (issue 24): the driver takes the steps in which nothing
//! can happen at once, and leaves behind the hosts with nothing to do. The
//! run must be the one stepping every tick makes, event for event. The
//! first tests drive turmoil's `step_ticks`, `step_lazily` and
//! `next_delivery` (as patched in `vendor/turmoil`) directly; the others
//! compare whole runs, stepping every tick (`Stepping::EveryTick`, the
//! `--every-tick` of `run` and `sweep`) and skipping.

use redlock_harness::runner::{self, Run};
use redlock_harness::scenario::{self, Scenario};
use redlock_harness::sim::workload::LockCode;
use redlock_harness::sim::Stepping;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

const MS: Duration = Duration::from_millis(1);

fn sim(latency: Duration) -> turmoil::Sim<'static> {
    turmoil::Builder::new()
        .tick_duration(MS)
        .min_message_latency(latency)
        .max_message_latency(latency)
        .simulation_duration(Duration::from_secs(60))
        .build()
}

/// A server that logs when each byte arrives; a client that sleeps `nap`,
/// connects and writes one byte.
fn pair(sim: &mut turmoil::Sim<'static>, nap: Duration, log: Rc<RefCell<Vec<Duration>>>) {
    sim.host("server", move || {
        let log = log.clone();
        async move {
            let l = TcpListener::bind("0.0.0.0:9000").await?;
            let (mut s, _) = l.accept().await?;
            let mut b = [0u8; 1];
            while s.read(&mut b).await? == 1 {
                log.borrow_mut().push(turmoil::sim_elapsed().unwrap());
            }
            Ok(())
        }
    });
    sim.client("client", async move {
        tokio::time::sleep(nap).await;
        let mut s = TcpStream::connect("server:9000").await?;
        s.write_all(&[1]).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(())
    });
}

/// `next_delivery` says when the network next delivers: nothing on the
/// way, then a SYN's hop of 5 ms.
#[test]
fn next_delivery_is_the_first_message_due() {
    let mut sim = sim(5 * MS);
    let log = Rc::default();
    pair(&mut sim, 10 * MS, log);
    sim.step().unwrap();
    assert_eq!(sim.next_delivery(), None, "nothing sent yet");
    while sim.elapsed() < 11 * MS {
        sim.step().unwrap();
    }
    // The SYN left at 10 ms (the client's nap), due at 15 ms.
    assert_eq!(sim.next_delivery(), Some(4 * MS));
}

/// A step of many ticks over a span in which nothing happens is the run
/// of one tick at a time: the byte arrives at the same instant.
#[test]
fn a_quiet_span_taken_at_once_changes_nothing() {
    let arrivals = |skip: bool| {
        let mut sim = sim(2 * MS);
        let log: Rc<RefCell<Vec<Duration>>> = Rc::default();
        pair(&mut sim, 40 * MS, log.clone());
        sim.step().unwrap();
        if skip {
            // The client's nap ends at 40 ms: 38 ticks from 1 ms are quiet.
            sim.step_ticks(38).unwrap();
            assert_eq!(sim.elapsed(), 39 * MS);
        }
        while sim.elapsed() < 100 * MS {
            sim.step().unwrap();
        }
        let got = log.borrow().clone();
        got
    };
    let every = arrivals(false);
    assert_eq!(every, vec![46 * MS], "a connect's round trip, then a hop");
    assert_eq!(arrivals(true), every);
}

/// A span that holds a host's wake-up is refused, not silently run late:
/// the client sends its SYN inside it.
#[test]
fn a_span_that_holds_a_send_is_an_error() {
    let mut sim = sim(2 * MS);
    pair(&mut sim, 10 * MS, Rc::default());
    sim.step().unwrap();
    let err = sim.step_ticks(20).unwrap_err().to_string();
    assert!(
        err.contains("sent a message inside a step of 20 ticks"),
        "{err}"
    );
}

/// A host left behind by `step_lazily` is brought to the present before a
/// message is delivered to it: the server, idle for 60 ms, reads the byte
/// at the instant it reads it stepping every host every tick.
#[test]
fn a_host_left_behind_is_brought_up_before_a_delivery() {
    let mut sim = sim(2 * MS);
    let log: Rc<RefCell<Vec<Duration>>> = Rc::default();
    pair(&mut sim, 40 * MS, log.clone());
    sim.step().unwrap();
    while sim.elapsed() < 100 * MS {
        // The server has no timer: it may always be left behind.
        sim.step_lazily(1, |host| host == "server").unwrap();
    }
    assert_eq!(*log.borrow(), vec![46 * MS]);
}

fn run(s: &Scenario, seed: u64, stepping: Stepping) -> Run {
    runner::simulate_stepping(s.clone(), seed, true, &LockCode::BuiltIn, stepping)
        .unwrap_or_else(|e| panic!("{} seed {seed} ({stepping:?}): {e}", s.name))
}

/// Runs `s` with `seed` both ways and asserts the same history, event for
/// event (the trace is a hash of it).
fn same_run(s: &Scenario, seed: u64) {
    let every = run(s, seed, Stepping::EveryTick);
    let skip = run(s, seed, Stepping::Skip);
    if every.history != skip.history {
        let (a, b) = (&every.history.events, &skip.history.events);
        let first = a
            .iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        panic!(
            "{} seed {seed}: skipping changed the run at event {first}: every tick {:?}, skipping {:?}",
            s.name,
            a.get(first),
            b.get(first)
        );
    }
    assert!(!every.history.events.is_empty(), "{}: an empty run", s.name);
    assert_eq!(every.trace, skip.trace);
    assert_eq!(every.check, skip.check);
}

/// The scenario files the project ships (those `scripts/exactness.sh`
/// sweeps): the examples, the variants, the library scenarios, the benches.
fn shipped() -> Vec<PathBuf> {
    [
        "scenarios",
        "scenarios/variants",
        "scenarios/libraries",
        "benches",
    ]
    .into_iter()
    .flat_map(crate::common::toml_files)
    .filter(|p| {
        !["matrix.toml", "bugs.toml", "load.toml"]
            .iter()
            .any(|n| p.ends_with(n))
    })
    .collect()
}

/// Every shipped scenario, at its own seed (a file with a `[sweep]`: its
/// base scenario), runs the same skipping as stepping every tick. The many
/// seeds are `reports/exactness/` (checked below).
#[test]
fn every_shipped_scenario_runs_the_same_skipping() {
    let files = shipped();
    assert!(files.len() >= 50, "{} files", files.len());
    let indices: Vec<usize> = (0..files.len()).collect();
    crate::common::on_two_threads(&indices, |i| {
        let s = scenario::load(&files[i]).unwrap_or_else(|e| panic!("{e}"));
        same_run(&s, s.seed);
    });
}

/// The scenarios of the suite's own data with every kind of fault at once,
/// a few seeds each.
#[test]
fn busy_scenarios_run_the_same_skipping() {
    for file in ["tests/data/busy_nemesis.toml", "benches/standard.toml"] {
        let s = scenario::load(Path::new(file)).unwrap();
        for seed in 1..=4 {
            same_run(&s, seed);
        }
    }
}

/// The committed exactness sweep covers every shipped scenario file, at
/// least 1,000 runs, each identical both ways.
#[test]
fn the_committed_exactness_sweep_found_every_run_identical() {
    let text = std::fs::read_to_string("reports/exactness/exactness.csv")
        .expect("reports/exactness/exactness.csv: run scripts/exactness.sh");
    let mut names = Vec::new();
    let mut runs = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[1], f[2], "{line}: runs that differ");
        runs += f[1].parse::<u64>().unwrap();
        names.push(f[0].to_string());
    }
    assert!(runs >= 1000, "{runs} runs");
    for f in shipped() {
        let name = scenario::load(&f).unwrap().name;
        assert!(
            names.contains(&name),
            "{}: not in the exactness sweep",
            f.display()
        );
    }
}

/// `run --every-tick` through the binary: the same run, the same trace.
#[test]
fn run_every_tick_prints_the_same_trace() {
    let trace = |extra: &[&str]| {
        let dir = std::env::temp_dir().join(format!(
            "redlock-sim-every-tick-{}-{}",
            std::process::id(),
            extra.len()
        ));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_redlock-sim"))
            .args(["run", "scenarios/gc_pause.toml", "--out"])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{stdout}");
        stdout
            .lines()
            .find(|l| l.starts_with("trace:"))
            .unwrap()
            .to_string()
    };
    assert_eq!(trace(&["--every-tick"]), trace(&[]));
}

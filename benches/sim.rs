//! Simulation speed, measured in one run on this machine: the standard
//! scenario (5 nodes, 3 clients, 60 s simulated, nemesis on) and a quiet
//! one (long holds and thinks, no faults), each run skipping the steps in
//! which nothing can happen and stepping every tick, against a bare turmoil
//! simulation of the same hosts and tick whose hosts do nothing — the floor
//! that turmoil's lock-step ticking sets.
//!
//! `cargo bench --bench sim` (release build). Prints seconds per seed,
//! simulated seconds per wall second, and the ratios; a sweep's runs per
//! second skipping and stepping every tick, and the speed-up of a sweep on
//! 2 worker threads over 1; and the peak memory of one run as the
//! simulated duration grows. With `BENCH_PROFILE=1`, only the standard
//! scenario skipping (for `perf record`).

use redlock_harness::scenario::{self, Scenario};
use redlock_harness::sim::workload::LockCode;
use redlock_harness::sim::Stepping;
use std::time::{Duration, Instant, UNIX_EPOCH};

fn bare_turmoil(s: &Scenario, seed: u64) -> Duration {
    let start = Instant::now();
    let mut b = turmoil::Builder::new();
    b.epoch(UNIX_EPOCH + Duration::from_secs(redlock_harness::sim::EPOCH_SECS))
        .tick_duration(s.tick)
        .simulation_duration(s.duration * 2)
        .rng_seed(seed)
        .min_message_latency(s.network.latency.lo)
        .max_message_latency(s.network.latency.hi);
    let mut sim = b.build();
    let mut hosts: Vec<String> = (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect();
    hosts.push("store".into());
    for h in hosts {
        sim.host(h, || async {
            let _l = turmoil::net::TcpListener::bind("0.0.0.0:6379").await?;
            std::future::pending::<()>().await;
            Ok(())
        });
    }
    for c in &s.clients {
        let d = s.duration;
        sim.client(c.name.clone(), async move {
            tokio::time::sleep(d).await;
            Ok(())
        });
    }
    sim.run().unwrap();
    start.elapsed()
}

/// Peak resident memory of this process so far, in MiB (Linux).
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Seconds per seed of `s` over seeds `1..=seeds`, run and checked, time
/// moved by `stepping`; and the acquisitions per seed.
fn harness(s: &Scenario, seeds: u64, stepping: Stepping) -> (f64, u64) {
    let start = Instant::now();
    let mut acquisitions = 0;
    for seed in 1..=seeds {
        let run = redlock_harness::runner::simulate_stepping(
            s.clone(),
            seed,
            false,
            &LockCode::BuiltIn,
            stepping,
        )
        .unwrap();
        acquisitions += run.check.liveness.acquisitions;
    }
    (
        start.elapsed().as_secs_f64() / seeds as f64,
        acquisitions / seeds,
    )
}

/// Seconds per seed of bare turmoil with `s`'s hosts and tick.
fn bare(s: &Scenario, seeds: u64) -> f64 {
    let start = Instant::now();
    for seed in 1..=seeds {
        bare_turmoil(s, seed);
    }
    start.elapsed().as_secs_f64() / seeds as f64
}

/// Measures and prints one scenario: skipping, every tick, bare turmoil.
fn scenario_speed(file: &str, seeds: u64) {
    let s = scenario::load(std::path::Path::new(file)).unwrap();
    let sim_secs = s.duration.as_secs_f64();
    let (skip, acquisitions) = harness(&s, seeds, Stepping::Skip);
    let (every, _) = harness(&s, seeds, Stepping::EveryTick);
    let bare = bare(&s, seeds);
    println!(
        "{} ({file}): {} nodes, {} clients, {sim_secs} s simulated, tick {:?}, {seeds} seeds, {acquisitions} acquisitions per seed",
        s.name,
        s.cluster.nodes,
        s.clients.len(),
        s.tick
    );
    for (what, secs) in [
        ("skipping", skip),
        ("every tick", every),
        ("bare turmoil", bare),
    ] {
        println!(
            "  {what:<13} {secs:.3} s per seed, {:.0} simulated s per wall s",
            sim_secs / secs
        );
    }
    println!(
        "  harness skipping / bare turmoil: {:.3}x; every tick / bare turmoil: {:.2}x; skipping is {:.1}x faster than every tick",
        skip / bare,
        every / bare,
        every / skip
    );
}

fn sweep_seconds(text: &str, seeds: u64, jobs: usize) -> f64 {
    sweep_seconds_by(text, seeds, jobs, Stepping::Skip)
}

/// The wall time of `redlock-sim sweep` on `text` (written to a scratch
/// file), seeds 1..=`seeds`, as a user runs it: every run, `runs.csv`, the
/// summary, the run reports and the sweep's report.
fn sweep_seconds_by(text: &str, seeds: u64, jobs: usize, stepping: Stepping) -> f64 {
    let dir = std::env::temp_dir().join(format!(
        "redlock-sim-bench-{}-{jobs}-{stepping:?}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("standard.toml");
    std::fs::write(&file, text).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_redlock-sim"));
    cmd.arg("sweep")
        .arg(&file)
        .args([
            "--seeds",
            &format!("1..={seeds}"),
            "--jobs",
            &jobs.to_string(),
        ])
        .arg("--out")
        .arg(dir.join("out"))
        .stdout(std::process::Stdio::null());
    if stepping == Stepping::EveryTick {
        cmd.arg("--every-tick");
    }
    let start = Instant::now();
    let status = cmd.status().unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert!(status.success(), "redlock-sim sweep: {status}");
    let _ = std::fs::remove_dir_all(&dir);
    secs
}

fn main() {
    if let Ok(what) = std::env::var("BENCH_MEMORY_CHILD") {
        return memory_child(&what);
    }
    let seeds: u64 = std::env::var("BENCH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    if std::env::var("BENCH_PROFILE").is_ok() {
        // Only the standard scenario, skipping: what `perf record` profiles.
        let s = scenario::load(std::path::Path::new("benches/standard.toml")).unwrap();
        let (secs, _) = harness(&s, seeds, Stepping::Skip);
        return println!("{secs:.3} s per seed");
    }
    scenario_speed("benches/standard.toml", seeds);
    scenario_speed("benches/quiet.toml", seeds);

    let text = std::fs::read_to_string("benches/standard.toml").unwrap();
    let n = seeds.max(4);
    let every = sweep_seconds_by(&text, n, 1, Stepping::EveryTick);
    let one = sweep_seconds(&text, n, 1);
    let two = sweep_seconds(&text, n, 2);
    println!(
        "sweep of {n} seeds of the standard scenario, --jobs 1: {:.2} runs/s every tick, {:.2} runs/s skipping ({:.1}x)",
        n as f64 / every,
        n as f64 / one,
        every / one
    );
    println!(
        "sweep of {n} seeds, skipping: --jobs 1 {one:.2} s, --jobs 2 {two:.2} s: {:.2}x speed-up",
        one / two
    );

    // Memory, each figure the peak of a process of its own (peak RSS only
    // grows within a process): one run as the simulated duration grows,
    // checked as it goes and keeping no history (what a sweep does), and a
    // sweep as its number of runs grows.
    let peak = |what: &str| -> f64 {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env("BENCH_MEMORY_CHILD", what)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(f64::NAN)
    };
    let short = peak("run:60");
    for secs in [60u64, 300, 1200] {
        let p = if secs == 60 {
            short
        } else {
            peak(&format!("run:{secs}"))
        };
        println!(
            "{secs:>5} s simulated: peak RSS {p:.1} MiB ({:.2}x the 60 s run)",
            p / short
        );
    }
    let few = peak("sweep:8");
    let many = peak("sweep:64");
    println!(
        "sweep, --jobs 1: 8 runs peak RSS {few:.1} MiB, 64 runs {many:.1} MiB ({:.2}x)",
        many / few
    );
}

/// The child of a memory measurement: `run:SECS` or `sweep:RUNS`; prints
/// its peak RSS in MiB.
fn memory_child(what: &str) {
    let s = scenario::load(std::path::Path::new("benches/standard.toml")).unwrap();
    match what.split_once(':') {
        Some(("run", secs)) => {
            let mut long = s.clone();
            long.duration = Duration::from_secs(secs.parse().unwrap());
            redlock_harness::runner::simulate(long, 1).unwrap();
        }
        Some(("sweep", runs)) => {
            let text = std::fs::read_to_string("benches/standard.toml").unwrap();
            sweep_seconds(&text, runs.parse().unwrap(), 1);
        }
        _ => panic!("unknown memory measurement {what}"),
    }
    println!("{}", peak_rss_mib());
}

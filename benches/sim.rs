//! Simulation speed, measured in one run on this machine: the standard
//! scenario (5 nodes, 3 clients, 60 s simulated, nemesis on) against a bare
//! turmoil simulation of the same hosts and tick whose hosts do nothing —
//! the floor that turmoil's lock-step ticking sets.
//!
//! `cargo bench --bench sim` (release build). Prints seeds per second,
//! simulated seconds per wall second, and the ratio of the two; the speed-up
//! of a sweep on 2 worker threads over 1; and the peak memory of one run as
//! the simulated duration grows.

use redlock_sim::scenario::{self, Scenario};
use std::time::{Duration, Instant, UNIX_EPOCH};

fn bare_turmoil(s: &Scenario, seed: u64) -> Duration {
    let start = Instant::now();
    let mut b = turmoil::Builder::new();
    b.epoch(UNIX_EPOCH + Duration::from_secs(redlock_sim::sim::EPOCH_SECS))
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

fn sweep_seconds(text: &str, seeds: u64, jobs: usize) -> f64 {
    let plan = std::sync::Arc::new(
        redlock_sim::sweep::Plan::from_text(
            text.to_string(),
            "benches/standard.toml".into(),
            Some(1..=seeds),
        )
        .unwrap(),
    );
    let out = std::env::temp_dir().join(format!("redlock-sim-bench-{}-{jobs}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let start = Instant::now();
    redlock_sim::cli::sweep::sweep(
        &plan,
        &redlock_sim::cli::sweep::Options {
            jobs,
            shard: None,
            out: out.clone(),
            progress: false,
            fresh: false,
        },
    )
    .unwrap();
    let secs = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out);
    secs
}

fn main() {
    if let Ok(what) = std::env::var("BENCH_MEMORY_CHILD") {
        return memory_child(&what);
    }
    let s = scenario::load(std::path::Path::new("benches/standard.toml")).unwrap();
    let seeds: u64 = std::env::var("BENCH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let sim_secs = s.duration.as_secs_f64();

    let start = Instant::now();
    let mut acquisitions = 0;
    for seed in 1..=seeds {
        let run = redlock_sim::runner::simulate(s.clone(), seed).unwrap();
        acquisitions += run.check.liveness.acquisitions;
    }
    let harness = start.elapsed().as_secs_f64() / seeds as f64;

    let start = Instant::now();
    for seed in 1..=seeds {
        bare_turmoil(&s, seed);
    }
    let bare = start.elapsed().as_secs_f64() / seeds as f64;

    println!(
        "standard scenario: {} nodes, {} clients, {sim_secs} s simulated, tick {:?}, {seeds} seeds",
        s.cluster.nodes,
        s.clients.len(),
        s.tick
    );
    println!("harness (run and check): {:.3} s per seed, {:.2} seeds/s, {:.1} simulated s per wall s, {} acquisitions per seed", harness, 1.0 / harness, sim_secs / harness, acquisitions / seeds);
    println!(
        "bare turmoil: {:.3} s per seed, {:.2} seeds/s, {:.1} simulated s per wall s",
        bare,
        1.0 / bare,
        sim_secs / bare
    );
    println!("harness / bare turmoil: {:.2}x", harness / bare);

    let text = std::fs::read_to_string("benches/standard.toml").unwrap();
    let n = seeds.max(4);
    let one = sweep_seconds(&text, n, 1);
    let two = sweep_seconds(&text, n, 2);
    println!(
        "sweep of {n} seeds: --jobs 1 {one:.2} s, --jobs 2 {two:.2} s: {:.2}x speed-up",
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
            redlock_sim::runner::simulate(long, 1).unwrap();
        }
        Some(("sweep", runs)) => {
            let text = std::fs::read_to_string("benches/standard.toml").unwrap();
            sweep_seconds(&text, runs.parse().unwrap(), 1);
        }
        _ => panic!("unknown memory measurement {what}"),
    }
    println!("{}", peak_rss_mib());
}

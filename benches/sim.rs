//! Simulation speed, measured in one run on this machine: the standard
//! scenario (5 nodes, 3 clients, 60 s simulated, nemesis on) against a bare
//! turmoil simulation of the same hosts and tick whose hosts do nothing —
//! the floor that turmoil's lock-step ticking sets.
//!
//! `cargo bench --bench sim` (release build). Prints seeds per second,
//! simulated seconds per wall second, and the ratio of the two.

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

fn main() {
    let s = scenario::load(std::path::Path::new("benches/standard.toml")).unwrap();
    let seeds: u64 = std::env::var("BENCH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let sim_secs = s.duration.as_secs_f64();

    let start = Instant::now();
    let mut events = 0;
    for seed in 1..=seeds {
        events += redlock_sim::sim::run(&s, seed).unwrap().events.len();
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
    println!("harness:      {:.3} s per seed, {:.2} seeds/s, {:.1} simulated s per wall s, {} events per seed", harness, 1.0 / harness, sim_secs / harness, events as u64 / seeds);
    println!(
        "bare turmoil: {:.3} s per seed, {:.2} seeds/s, {:.1} simulated s per wall s",
        bare,
        1.0 / bare,
        sim_secs / bare
    );
    println!("harness / bare turmoil: {:.2}x", harness / bare);
}
